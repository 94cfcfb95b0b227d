"""`gemini:MODEL`: the Gemini API through the google-genai SDK (`genai.Client(...).aio`).

System messages become the system instruction; text and image parts keep their order, images as
inline bytes (`Part.from_bytes`). A blocked prompt (promptFeedback.blockReason) or a candidate
stopped for safety (finishReason SAFETY, BLOCKLIST, RECITATION, ...) is recorded as blocked.
Thinking models spend output tokens on thoughts: with a small --max-tokens the reply may have no
text (recorded as empty); `--model-opt thinking_budget=N` bounds the thinking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

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
from vidbench.models.call_errors import (
    MalformedReply,
    classify,
    http_limits,
    no_text,
    reply_text,
    require_utf8_body,
)
from vidbench.models.registry import ModelOptions
from vidbench.models.retry import Failure, from_status
from vidbench.models.wire import image_bytes, split_system

if TYPE_CHECKING:
    from google.genai import types


class GeminiPayload(TypedDict):
    """generate_content's arguments for one request."""

    model: str
    contents: list[types.Content]
    config: types.GenerateContentConfig


GEMINI_URL = "https://generativelanguage.googleapis.com"
GEMINI_OPTIONS = (*COMMON_OPTIONS, "thinking_budget")
BLOCKING_FINISH = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)


def gemini_contents(
    messages: Sequence[Message], jpeg_quality: int | None = None
) -> tuple[str | None, list[types.Content]]:
    """The one message protocol -> (system instruction, google-genai Contents)."""
    from google.genai import types

    system, turns = split_system(messages, "Gemini takes no images in the system instruction")
    contents: list[types.Content] = []
    for message in turns:
        parts = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append(types.Part.from_text(text=part.text))
                continue
            data, mime = image_bytes(part, jpeg_quality)
            parts.append(types.Part.from_bytes(data=data, mime_type=mime))
        role = "model" if message.role == "assistant" else "user"
        contents.append(types.Content(role=role, parts=parts))
    return system, contents


def _name(value: Any) -> str | None:
    """An SDK enum or plain string as its name ("SAFETY")."""
    return None if value is None else str(getattr(value, "value", value))


def read_generation(reply: Any, key: str) -> Response:
    """A GenerateContentResponse -> Response: blocked, empty or ok."""
    meta = getattr(reply, "usage_metadata", None)
    output_tokens = (getattr(meta, "candidates_token_count", 0) or 0) + (
        getattr(meta, "thoughts_token_count", 0) or 0
    )
    usage = (
        UNKNOWN_USAGE
        if meta is None
        else Usage(getattr(meta, "prompt_token_count", 0) or 0, output_tokens)
    )
    feedback = getattr(reply, "prompt_feedback", None)
    block = _name(getattr(feedback, "block_reason", None))
    if block is not None:
        error = f"prompt blocked (blockReason={block})"
        return Response(key, None, error=error, usage=usage, status="blocked")
    candidates = getattr(reply, "candidates", None)
    if candidates is None and getattr(reply, "usage_metadata", None) is None:
        raise MalformedReply("the reply has neither candidates nor usage")
    if not candidates:
        return Response(key, None, error="the reply has no candidates", usage=usage, status="empty")
    candidate = candidates[0]
    finish = _name(getattr(candidate, "finish_reason", None))
    if finish in BLOCKING_FINISH:
        error = f"blocked (finishReason={finish})"
        return Response(key, None, error=error, usage=usage, status="blocked")
    content = getattr(candidate, "content", None)
    parts = getattr(content, "parts", None) or []
    text = "".join(
        reply_text(p.text, "a part of the reply") or ""
        for p in parts
        if getattr(p, "text", None) and not getattr(p, "thought", None)
    )
    if not text.strip():
        error = no_text("finishReason", finish)
        return Response(key, None, error=error, usage=usage, status="empty")
    return Response(key, text, usage=usage, truncated=stopped_at_token_limit(finish))


def retry_delay(details: Any) -> float | None:
    """The wait a Gemini error body asks for: its google.rpc.RetryInfo detail's `retryDelay`
    (a Duration, "37s"), or None. Gemini sends it with a 429 instead of a Retry-After header."""
    error = details.get("error", details) if isinstance(details, dict) else None
    listed = error.get("details") if isinstance(error, dict) else None
    for detail in listed if isinstance(listed, list) else []:
        if not isinstance(detail, dict) or not str(detail.get("@type", "")).endswith("RetryInfo"):
            continue
        delay = detail.get("retryDelay")
        try:
            return float(str(delay).removesuffix("s"))
        except ValueError:
            return None
    return None


def classify_gemini(exc: BaseException) -> Failure:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return from_status(
            exc.code, exc.message or str(exc), headers, retry_delay(getattr(exc, "details", None))
        )
    return classify(exc)


class GeminiGenerate(ApiModel):
    def __init__(self, access: ApiAccess, model: str, thinking_budget: int | None = None) -> None:
        super().__init__(access)
        self.model = model
        self.thinking_budget = thinking_budget

    def answer_settings(self) -> dict[str, Json]:
        return {} if self.thinking_budget is None else {"thinking_budget": self.thinking_budget}

    def _make_client(self, api_key: str | None) -> Any:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=self.endpoint,
            timeout=int(self.settings.timeout * 1000),  # milliseconds
            async_client_args={
                "limits": http_limits(self.settings.concurrency),
                "event_hooks": {"response": [require_utf8_body]},
            },
            retry_options=None,  # no SDK retries: api_model.py retries
        )
        return genai.Client(api_key=api_key, http_options=options)

    async def _close_client(self, client: Any) -> None:
        await client.aio.aclose()
        client.close()

    def _payload(self, request: Request) -> GeminiPayload:
        from google.genai import types

        g = request.generation
        system, contents = gemini_contents(request.messages, self.settings.jpeg_quality)
        thinking = (
            None
            if self.thinking_budget is None
            else types.ThinkingConfig(thinking_budget=self.thinking_budget)
        )
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=g.temperature,
            top_p=g.top_p,
            max_output_tokens=g.max_tokens,
            seed=g.seed,
            thinking_config=thinking,
        )
        return {"model": self.model, "contents": contents, "config": config}

    async def _send(self, client: Any, payload: GeminiPayload, request: Request) -> Response:
        return read_generation(await client.aio.models.generate_content(**payload), request.key)

    def _classify(self, exc: BaseException) -> Failure:
        return classify_gemini(exc)

    async def _preflight(self, client: Any) -> None:
        await client.aio.models.list(config={"page_size": 1})


def build_gemini(arg: str, options: ModelOptions) -> Model:
    reader = named_model_options(
        "gemini", arg, "gemini-2.5-flash", "google.genai", options, GEMINI_OPTIONS
    )
    access = reader.provider_access(
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GOOGLE_GEMINI_BASE_URL", GEMINI_URL
    )
    return GeminiGenerate(access, arg, reader.integer("thinking_budget", None, -1))
