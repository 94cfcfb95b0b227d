"""What the backends on Stainless-generated SDKs (`openai`, `anthropic`) share: a client built
the way api_model.py drives it, and the SDKs' exceptions, whose classes have the same shape."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from vidbench.models.api_options import ApiSettings
from vidbench.models.call_errors import classify, http_limits
from vidbench.models.retry import Failure, from_status


def stainless_client(
    sdk: ModuleType, client_class: Any, api_key: str | None, endpoint: str, settings: ApiSettings
) -> Any:
    """An async client of `sdk` with its own retries off (api_model.py retries), `timeout` for
    each request and a connection pool of `concurrency`."""
    http = sdk.DefaultAsyncHttpxClient(
        limits=http_limits(settings.concurrency), timeout=settings.timeout
    )
    return client_class(
        api_key=api_key,
        base_url=endpoint,
        max_retries=0,
        timeout=settings.timeout,
        http_client=http,
    )


_ERROR_CODE_PREFIX = re.compile(r"^Error code: \d+ - ")


def _error_body(exc: Any) -> dict[str, Any]:
    """The error object of an error body ({"error": {...}}), or {}. (The SDKs hand over the
    body's "error" object itself, or the whole body.)"""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _server_message(exc: Any) -> str:
    """The message the server put in its error body ({"error": {"message": ...}})."""
    message = _error_body(exc).get("message")
    if isinstance(message, str):
        return message
    return _ERROR_CODE_PREFIX.sub("", str(getattr(exc, "message", exc)))


def _quota_spent(exc: Any) -> bool:
    """A 429 that says the account's quota or credit is spent (OpenAI's code and type
    `insufficient_quota`): asking again does not help."""
    error = _error_body(exc)
    return "insufficient_quota" in (error.get("code"), error.get("type"))


def classify_stainless(exc: BaseException, sdk: ModuleType) -> Failure:
    """Errors of the `openai` and `anthropic` SDKs, which share their exception classes' shape."""
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code == 429 and _quota_spent(exc):
            return Failure("quota", _server_message(exc), 429)
        return from_status(exc.status_code, _server_message(exc), exc.response.headers)
    if isinstance(exc, sdk.APITimeoutError):
        return Failure("timeout", "no reply within the timeout")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        return Failure(
            "connection", f"{exc} ({type(cause).__name__}: {cause})" if cause else str(exc)
        )
    if isinstance(exc, sdk.APIResponseValidationError):
        return Failure("malformed", f"malformed reply: {exc}")
    return classify(exc)
