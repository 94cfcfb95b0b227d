"""Wire formats of the fake server: OpenAI chat completions, Anthropic messages, Gemini
generateContent. Each renders a scripted `Reply` (or an error) as that API's JSON body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from vidbench.core.files import Json

BlockKind = Literal["prompt", "output"]


@dataclass(frozen=True)
class Reply:
    """What the fake model answers. A `reply` callable may return a plain string (the text) or
    this, to script the other outcomes:

    refusal: an explicit refusal (OpenAI `message.refusal`, Anthropic stop_reason "refusal").
    blocked: a safety block, "prompt" (Gemini promptFeedback) or "output" (OpenAI finish_reason
        content_filter, Anthropic stop_reason "refusal", Gemini finishReason SAFETY).
    http_status: answer with this HTTP error status and `error` as the message instead.
    truncated: the text stopped at the token limit (OpenAI finish_reason "length", Anthropic
        stop_reason "max_tokens", Gemini finishReason MAX_TOKENS).
    Text None with nothing else set is a reply without text (status "empty" at the client).
    """

    text: str | None = None
    refusal: str | None = None
    blocked: BlockKind | None = None
    http_status: int | None = None
    error: str = "scripted error"
    truncated: bool = False


def _objects(value: JsonValue) -> list[dict[str, JsonValue]]:
    """The JSON objects of a list (none when `value` is not a list)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _parts_text(content: JsonValue) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [text for p in _objects(content) if isinstance(text := p.get("text"), str)]


def request_text(body: dict[str, JsonValue]) -> str:
    """Every text of a request body of any of the three APIs, joined by newlines (to script
    replies on the prompt, e.g. a judge's)."""
    texts: list[str] = []
    if "system" in body:  # Anthropic
        texts += _parts_text(body["system"])
    for message in _objects(body.get("messages")):  # OpenAI, Anthropic
        texts += _parts_text(message.get("content"))
    system = body.get("systemInstruction") or body.get("system_instruction")
    for content in _objects([system]) + _objects(body.get("contents")):  # Gemini
        texts += _parts_text(content.get("parts"))
    return "\n".join(texts)


def count_images(body: dict[str, JsonValue]) -> int:
    n = 0
    for message in _objects(body.get("messages")):
        n += sum(
            1 for p in _objects(message.get("content")) if p.get("type") in ("image_url", "image")
        )
    for content in _objects(body.get("contents")):
        n += sum(
            1 for p in _objects(content.get("parts")) if "inlineData" in p or "inline_data" in p
        )
    return n


def tokens(body: dict[str, JsonValue], reply_text: str | None) -> tuple[int, int]:
    """A deterministic stand-in for token counts: 4 characters a token, 85 per image."""
    prompt = len(request_text(body)) // 4 + 85 * count_images(body) + 1
    return prompt, len(reply_text or "") // 4 + 1


class WireApi:
    """One API's wire format as the fake server speaks it: its replies, errors and a body cut
    short (`malformed`)."""

    name: str
    malformed: bytes

    @staticmethod
    def model(body: dict[str, JsonValue], path_model: str | None) -> str:
        """The model asked for: the body's "model" (OpenAI, Anthropic)."""
        return str(body.get("model", ""))

    @staticmethod
    def ok(reply: Reply, body: dict[str, JsonValue], model: str, n: int) -> dict[str, Json]:
        raise NotImplementedError

    @staticmethod
    def error(status: int, message: str) -> dict[str, Json]:
        raise NotImplementedError


class FakeOpenAIChat(WireApi):
    name = "openai"
    malformed = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": ['

    @staticmethod
    def ok(reply: Reply, body: dict[str, JsonValue], model: str, n: int) -> dict[str, Json]:
        text = None if reply.blocked or reply.refusal else reply.text
        prompt, completion = tokens(body, text)
        message = {"role": "assistant", "content": text, "refusal": reply.refusal}
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "content_filter"
                    if reply.blocked
                    else "length"
                    if reply.truncated
                    else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    @staticmethod
    def error(status: int, message: str) -> dict[str, Json]:
        return {"error": {"message": message, "type": "fake_error", "code": str(status)}}


class FakeAnthropicMessages(WireApi):
    name = "anthropic"
    malformed = b'{"id": "msg_broken", "type": "message", "content": [{"type": "te'

    @staticmethod
    def ok(reply: Reply, body: dict[str, JsonValue], model: str, n: int) -> dict[str, Json]:
        text = reply.refusal if reply.refusal else None if reply.blocked else reply.text
        prompt, completion = tokens(body, text)
        refused = reply.refusal is not None or reply.blocked is not None
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [] if text is None else [{"type": "text", "text": text}],
            "stop_reason": "refusal"
            if refused
            else "max_tokens"
            if reply.truncated
            else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }

    @staticmethod
    def error(status: int, message: str) -> dict[str, Json]:
        kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


class FakeGeminiGenerate(WireApi):
    name = "gemini"
    malformed = b'{"candidates": [{"content": {"parts": [{"text": "(A'

    @staticmethod
    def model(body: dict[str, JsonValue], path_model: str | None) -> str:
        return path_model or ""  # named in the path: /v1beta/models/MODEL:generateContent

    @staticmethod
    def ok(reply: Reply, body: dict[str, JsonValue], model: str, n: int) -> dict[str, Json]:
        text = reply.refusal or (None if reply.blocked else reply.text)
        prompt, completion = tokens(body, text)
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        }
        if reply.blocked == "prompt":
            return {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage}
        candidate: dict[str, Json] = {
            "content": {"role": "model", "parts": [] if text is None else [{"text": text}]},
            "finishReason": "SAFETY"
            if reply.blocked
            else "MAX_TOKENS"
            if reply.truncated
            else "STOP",
            "index": 0,
        }
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}

    @staticmethod
    def error(status: int, message: str) -> dict[str, Json]:
        name = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT", 500: "INTERNAL"}.get(
            status, "UNKNOWN"
        )
        return {"error": {"code": status, "message": message, "status": name}}
