"""Exceptions raised by API clients -> `Failure`s (retry.py decides what to do with them)."""

from __future__ import annotations

import functools
import json
from types import ModuleType
from typing import Any

from vidbench.core.requests import stopped_at_token_limit
from vidbench.models.retry import Failure


class MalformedReply(ValueError):
    """The server said 200 but the body is not a usable reply (no choices, truncated JSON, an
    answer text that is not a string)."""


def no_text(field: str, reason: object) -> str:
    """The error of a reply without text, with its stop reason (`field`=`reason`, in the API's
    words); one cut at its token limit says so, and what to change."""
    said = f"the reply has no text ({field}={getattr(reason, 'value', reason)})"
    if not stopped_at_token_limit(reason):
        return said
    return (
        f"{said}: it stopped at its token limit before any text (a larger --max-tokens; for a "
        "thinking model, a smaller thinking budget)"
    )


def reply_text(value: Any, where: str) -> str | None:
    """A reply's text field: a string, or None when the reply has none; any other value (a
    number, a list) is a malformed reply, retried like other unusable bodies."""
    if value is None or isinstance(value, str):
        return value
    raise MalformedReply(f"{where} is not text: {value!r:.80} ({type(value).__name__})")


@functools.cache
def _http_modules() -> tuple[ModuleType, ...]:
    """httpx and its fork httpx2, whichever are installed (SDK versions use one or the other)."""
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(__import__(name))
        except ImportError:
            continue
    return tuple(found)


async def require_utf8_body(response: Any) -> None:
    """An httpx response hook: a successful reply whose body is not UTF-8 (as JSON must be)
    raises UnicodeDecodeError, a malformed reply, where a client would quietly replace the bad
    bytes (google-genai does)."""
    if response.is_success:
        await response.aread()
        response.content.decode("utf-8")


def http_limits(connections: int) -> Any:
    """An httpx Limits allowing `connections` open (and kept-alive) connections."""
    module = _http_modules()[0]
    return module.Limits(max_connections=connections, max_keepalive_connections=connections)


def classify(exc: BaseException) -> Failure:
    """Failures every backend shares: deadlines, transport errors, unreadable bodies."""
    if isinstance(exc, MalformedReply | json.JSONDecodeError):
        return Failure("malformed", f"malformed reply: {exc}")
    if isinstance(exc, UnicodeDecodeError):  # a 200 body that is not UTF-8 (JSON must be)
        return Failure("malformed", f"malformed reply: the body is not valid UTF-8 ({exc})")
    if isinstance(exc, TimeoutError):
        return Failure("timeout", "no reply within the timeout")
    for module in _http_modules():
        if isinstance(exc, module.TimeoutException):
            return Failure("timeout", f"{type(exc).__name__}: {exc}")
        if isinstance(exc, module.TransportError):
            return Failure("connection", f"{type(exc).__name__}: {exc}")
    if type(exc).__name__ == "ValidationError":  # pydantic: the body has the wrong shape
        return Failure("malformed", f"malformed reply: {exc}")
    return Failure("unexpected", repr(exc))
