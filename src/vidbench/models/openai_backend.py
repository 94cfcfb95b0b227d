"""`openai:MODEL` and `openai-compat:BASE_URL#MODEL`: chat completions on the official client.

Images go as base64 `data:` URLs in `image_url` parts, in the message's order; a message without
images is sent as a plain string, which every compatible server (vLLM, SGLang, Ollama, llama.cpp)
accepts. The client's own retries are off (max_retries=0): api_model.py retries, explicitly.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import (
    UNKNOWN_USAGE,
    Request,
    Response,
    Usage,
    stopped_at_token_limit,
)
from vidbench.models.api_model import ApiModel
from vidbench.models.api_options import (
    COMMON_OPTIONS,
    ApiAccess,
    OptionReader,
    named_model_options,
    sdk_options,
)
from vidbench.models.base import Model
from vidbench.models.call_errors import MalformedReply, no_text, reply_text
from vidbench.models.registry import ModelOptions
from vidbench.models.retry import Failure
from vidbench.models.stainless import classify_stainless, stainless_client
from vidbench.models.wire import data_url

OPENAI_URL = "https://api.openai.com/v1"
DETAILS = ("low", "high", "auto")
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
OPENAI_OPTIONS = (*COMMON_OPTIONS, "detail", "max_tokens_field")
COMPAT_OPTIONS = tuple(k for k in OPENAI_OPTIONS if k != "base_url")  # the URL is in the spec
# Sent to servers that need no key, so the SDK never falls back to OPENAI_API_KEY and hands a
# real key to an arbitrary server.
NO_KEY = "no-key"


# Stands for an image's URL in a request's JSON until the URL is put in (chat_body); random, so
# that no prompt's text holds it.
IMAGE_MARK = f"vidbench-image-{uuid.uuid4().hex}-"


def chat_messages(
    messages: Sequence[Message], detail: str | None, image_url: Callable[[ImagePart], str]
) -> list[dict[str, Json]]:
    """The one message protocol -> chat-completions messages; `image_url` gives each image's."""
    converted: list[dict[str, Json]] = []
    for message in messages:
        if not message.images:
            converted.append({"role": message.role, "content": message.text})
            continue
        if message.role != "user":
            raise ValueError(f"chat completions take images in user messages, not {message.role}")
        parts: list[dict[str, Json]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
                continue
            image: dict[str, str] = {"url": image_url(part)}
            if detail is not None:
                image["detail"] = detail
            parts.append({"type": "image_url", "image_url": image})
        converted.append({"role": message.role, "content": parts})
    return converted


def chat_body(payload: dict[str, Json], urls: Sequence[str]) -> bytes:
    """`payload` as the JSON bytes the SDK would send for it (its `openapi_dumps`: compact, not
    ASCII-escaped), the mark `IMAGE_MARK{i}` replaced by `urls[i]`. json.dumps reads every
    character of a string to escape it, 4 ms per request for the base64 of 8 frames of 768 px;
    a data URL has nothing to escape, so it goes in as it is."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    head, *marked = text.split(f'"{IMAGE_MARK}')
    if len(marked) != len(urls):
        raise ValueError(f"{len(urls)} images, {len(marked)} places for them in the request")
    pieces = [head.encode()]
    for piece in marked:
        index, tail = piece.split('"', 1)
        pieces += [b'"', urls[int(index)].encode("ascii"), b'"', tail.encode()]
    return b"".join(pieces)


def content_text(content: Any) -> Any:
    """A message's content as text: a string as it is; a list of parts (as some compatible
    servers send, e.g. a reasoning model's thinking and text parts) as its text parts joined,
    None when it has none; anything else as it is (reply_text says it is not text)."""
    if not isinstance(content, list) or not all(isinstance(p, dict) for p in content):
        return content
    texts = [p.get("text") for p in content if p.get("type", "text") == "text"]
    if not all(isinstance(t, str) for t in texts):
        return content
    return "".join(texts) if texts else None


def read_completion(completion: Any, key: str) -> Response:
    """A chat completion -> Response: refused, blocked, empty or ok (raises when malformed)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        error = getattr(completion, "error", None)  # some servers put errors in a 200 body
        raise MalformedReply("the reply has no choices" + (f" (error: {error})" if error else ""))
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise MalformedReply("the reply's first choice has no message")
    raw_usage = getattr(completion, "usage", None)
    usage = (
        UNKNOWN_USAGE
        if raw_usage is None
        else Usage(
            getattr(raw_usage, "prompt_tokens", 0) or 0,
            getattr(raw_usage, "completion_tokens", 0) or 0,
        )
    )
    refusal = getattr(message, "refusal", None)
    if refusal:
        return Response(key, None, error=f"refused: {refusal}", usage=usage, status="refused")
    if choice.finish_reason == "content_filter":
        error = "blocked by the content filter (finish_reason=content_filter)"
        return Response(key, None, error=error, usage=usage, status="blocked")
    text = reply_text(content_text(message.content), "the reply's message content")
    if text is None or not text.strip():
        error = no_text("finish_reason", choice.finish_reason)
        return Response(key, None, error=error, usage=usage, status="empty")
    return Response(key, text, usage=usage, truncated=stopped_at_token_limit(choice.finish_reason))


class OpenAIChat(ApiModel):
    def __init__(
        self,
        access: ApiAccess,
        model: str,
        detail: str | None = None,
        max_tokens_field: str = "max_tokens",
    ) -> None:
        super().__init__(access)
        self.model = model
        self.detail = detail
        self.max_tokens_field = max_tokens_field

    def answer_settings(self) -> dict[str, Json]:
        return {"detail": self.detail} if self.detail is not None else {}

    def _make_client(self, api_key: str | None) -> Any:
        import openai

        key = api_key or NO_KEY
        return stainless_client(openai, openai.AsyncOpenAI, key, self.endpoint, self.settings)

    async def _close_client(self, client: Any) -> None:
        await client.close()

    def _payload(self, request: Request) -> bytes:
        """The request body, serialised here (chat_body) rather than by the SDK."""
        urls: list[str] = []

        def image_url(part: ImagePart) -> str:
            urls.append(data_url(part, self.settings.jpeg_quality))
            return f"{IMAGE_MARK}{len(urls) - 1}"

        g = request.generation
        payload: dict[str, Json] = {
            "model": self.model,
            "messages": chat_messages(request.messages, self.detail, image_url),
            "temperature": g.temperature,
            "top_p": g.top_p,
            self.max_tokens_field: g.max_tokens,
        }
        if g.seed is not None:
            payload["seed"] = g.seed
        return chat_body(payload, urls)

    async def _send(self, client: Any, payload: bytes, request: Request) -> Response:
        # The client's documented low-level post (its "undocumented endpoints" path): the same
        # auth, errors and response model as chat.completions.create, without create()'s typed
        # walk over every message part, which costs ~9 ms of CPU for an 18-image request. The
        # body is already JSON (chat_body): `content` sends it as it is.
        from openai.types.chat import ChatCompletion

        completion = await client.post("/chat/completions", content=payload, cast_to=ChatCompletion)
        return read_completion(completion, request.key)

    def _classify(self, exc: BaseException) -> Failure:
        import openai

        return classify_stainless(exc, openai)

    async def _preflight(self, client: Any) -> None:
        # GET /models through the client's low-level get (as _send posts): `client.models.list()`
        # would first import every resource module of the SDK (openai.resources, about 8 ms of
        # CPU before the first request), which nothing else here uses. The same errors come
        # back for the same answers (classify_stainless).
        await client.get("/models", cast_to=object)


def _chat(access: ApiAccess, model: str, reader: OptionReader, max_tokens_field: str) -> Model:
    """An OpenAIChat with its own options: `detail`, `max_tokens_field` (else the one given)."""
    return OpenAIChat(
        access,
        model,
        reader.choice("detail", DETAILS),
        reader.choice("max_tokens_field", MAX_TOKENS_FIELDS) or max_tokens_field,
    )


def build_openai(arg: str, options: ModelOptions) -> Model:
    reader = named_model_options("openai", arg, "gpt-4o", "openai", options, OPENAI_OPTIONS)
    access = reader.provider_access(("OPENAI_API_KEY",), "OPENAI_BASE_URL", OPENAI_URL)
    return _chat(access, arg, reader, "max_completion_tokens")


def build_openai_compat(arg: str, options: ModelOptions) -> Model:
    base_url, sep, name = arg.rpartition("#")
    if not sep or not base_url or not name:
        raise ConfigError(
            f"model 'openai-compat:{arg}': expected openai-compat:BASE_URL#MODEL, e.g. "
            "openai-compat:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct"
        )
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"model 'openai-compat:{arg}': {base_url!r} is not an http(s) URL")
    reader = sdk_options(f"openai-compat:{arg}", "openai", options, COMPAT_OPTIONS)
    access = reader.access(reader.api_key((), required=False), base_url.rstrip("/"))
    return _chat(access, name, reader, "max_tokens")
