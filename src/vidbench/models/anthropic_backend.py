"""`anthropic:MODEL`: the Messages API on the official `anthropic` async client.

System messages go to the `system` field; text and image parts keep their order, images as
base64 source blocks. stop_reason "refusal" is recorded as refused.

Only max_tokens of the generation settings is sent: the Messages API version the SDK speaks
(2026-10-21, anthropic SDK 2.x) rejects temperature, top_p and top_k at any value, and has no
seed. The model's identity says so (`"sampling": "provider-default"`), and the settings stay
part of every store key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vidbench.core.files import Json
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import (
    UNKNOWN_USAGE,
    Request,
    Response,
    Usage,
    stopped_at_token_limit,
)
from vidbench.models.api_model import ApiModel
from vidbench.models.api_options import COMMON_OPTIONS, ApiAccess, named_model_options
from vidbench.models.base import Model
from vidbench.models.call_errors import MalformedReply, no_text, reply_text
from vidbench.models.registry import ModelOptions
from vidbench.models.retry import Failure
from vidbench.models.stainless import classify_stainless, stainless_client
from vidbench.models.wire import image_base64, split_system

ANTHROPIC_URL = "https://api.anthropic.com"


def anthropic_messages(
    messages: Sequence[Message], jpeg_quality: int | None = None
) -> tuple[str | None, list[dict[str, Json]]]:
    """The one message protocol -> (system text, Messages API turns)."""
    system, rest = split_system(messages, "Anthropic takes no images in the system prompt")
    turns: list[dict[str, Json]] = []
    for message in rest:
        blocks: list[dict[str, Json]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                if part.text:  # the API rejects empty text blocks
                    blocks.append({"type": "text", "text": part.text})
                continue
            data, mime = image_base64(part, jpeg_quality)
            source = {"type": "base64", "media_type": mime, "data": data}
            blocks.append({"type": "image", "source": source})
        turns.append({"role": message.role, "content": blocks})
    return system, turns


def read_message(message: Any, key: str) -> Response:
    """A Messages API reply -> Response: refused, empty or ok (raises when malformed)."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise MalformedReply("the reply has no content list")
    texts = [
        reply_text(getattr(b, "text", None), "a text block of the reply")
        for b in content
        if getattr(b, "type", None) == "text"
    ]
    text = "".join(t for t in texts if t)
    raw = getattr(message, "usage", None)
    usage = (
        UNKNOWN_USAGE
        if raw is None
        else Usage(getattr(raw, "input_tokens", 0) or 0, getattr(raw, "output_tokens", 0) or 0)
    )
    stop = getattr(message, "stop_reason", None)
    if stop == "refusal":
        error = "refused (stop_reason=refusal)" + (f": {text}" if text else "")
        return Response(key, None, error=error, usage=usage, status="refused")
    if not text.strip():
        error = no_text("stop_reason", stop)
        return Response(key, None, error=error, usage=usage, status="empty")
    return Response(key, text, usage=usage, truncated=stopped_at_token_limit(stop))


class AnthropicMessages(ApiModel):
    def __init__(self, access: ApiAccess, model: str) -> None:
        super().__init__(access)
        self.model = model

    def answer_settings(self) -> dict[str, Json]:
        return {"sampling": "provider-default"}

    def _make_client(self, api_key: str | None) -> Any:
        import anthropic

        return stainless_client(
            anthropic, anthropic.AsyncAnthropic, api_key, self.endpoint, self.settings
        )

    async def _close_client(self, client: Any) -> None:
        await client.close()

    def _payload(self, request: Request) -> dict[str, Json]:
        system, turns = anthropic_messages(request.messages, self.settings.jpeg_quality)
        payload: dict[str, Json] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": request.generation.max_tokens,
        }
        if system is not None:
            payload["system"] = system
        return payload

    async def _send(self, client: Any, payload: dict[str, Json], request: Request) -> Response:
        return read_message(await client.messages.create(**payload), request.key)

    def _classify(self, exc: BaseException) -> Failure:
        import anthropic

        return classify_stainless(exc, anthropic)

    async def _preflight(self, client: Any) -> None:
        await client.models.list(limit=1)


def build_anthropic(arg: str, options: ModelOptions) -> Model:
    reader = named_model_options(
        "anthropic", arg, "claude-sonnet-4-5", "anthropic", options, COMMON_OPTIONS
    )
    access = reader.provider_access(("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", ANTHROPIC_URL)
    return AnthropicMessages(access, arg)
