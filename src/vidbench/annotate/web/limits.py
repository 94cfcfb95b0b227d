"""Requests are checked before their bodies are read (an ASGI middleware around the app).

FastAPI reads and parses a request's body before it runs the dependencies that check the
session, so without this an unauthenticated client could make the server parse a 200 MB JSON
body or spool a 500 MB upload to disk before answering 401. Here, before any body byte is read
(and a path with a control character, which no route matches, is a 400 as well):

- a POST (or any method other than GET/HEAD/OPTIONS) to anything but the sign-in form needs a
  live session cookie and its CSRF header: 401 / 403 otherwise;
- each route has a body limit (`LIMITS`, by path prefix; DEFAULT otherwise): a Content-Length
  over it is answered 413 at once, and a body without one (chunked) is counted as it streams
  and cut off with 413 when it passes the limit, so an upload is never spooled beyond it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from vidbench.annotate import auth
from vidbench.annotate.web.deps import SESSION_COOKIE

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

KIB = 1024
MAX_UPLOAD = 50 * KIB * KIB  # an uploaded review_queue.jsonl
LIMITS = {  # longest prefix first
    "/api/admin/import": MAX_UPLOAD + 64 * KIB,  # the file and the multipart framing
    "/login": 16 * KIB,
}
DEFAULT = 256 * KIB  # a save: 5000 characters of text, JSON-escaped at worst 6 bytes each
PUBLIC_POSTS = ("/login",)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit // KIB} KiB")


def limit_for(path: str) -> int:
    for prefix, limit in LIMITS.items():
        if path == prefix or path.startswith(prefix + "/"):
            return limit
    return DEFAULT


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _session_token(scope: Scope, cookie_name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(raw)
    except CookieError:
        return None
    found = cookies.get(cookie_name)
    return found.value if found else None


async def _answer(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers.append((b"connection", b"close"))  # the unread body is not waited for
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CheckFirst:
    """ASGI middleware: the session and the body size before the body (see the module doc).
    `check_session(token, csrf)` answers None when both are good, else (status, message)."""

    def __init__(
        self, app: Any, check_session: Callable[[str | None, str | None], tuple[int, str] | None]
    ) -> None:
        self.app = app
        self.check_session = check_session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        if any(ord(c) < 32 or ord(c) == 127 for c in path):  # routes match no such path
            await _answer(send, 400, "a path with a control character")
            return
        if method not in SAFE_METHODS and path not in PUBLIC_POSTS:
            token = _session_token(scope, SESSION_COOKIE)
            refused = await run_in_threadpool(
                self.check_session, token, _header(scope, b"x-csrf-token")
            )
            if refused is not None:
                await _answer(send, *refused)
                return
        limit = limit_for(path)
        length = _header(scope, b"content-length")
        if length is not None:
            if not length.isdigit():
                await _answer(send, 400, "a bad Content-Length")
                return
            if int(length) > limit:
                await _answer(send, 413, f"the request body is larger than {limit // KIB} KiB")
                return
        await self.app(scope, _counted(receive, limit), send)


def _counted(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)  # FastAPI passes an HTTPException on as it is
        return message

    return counted


def session_checker(connect: Callable[[], Any]) -> Callable[[str | None, str | None], Any]:
    """The check CheckFirst runs (in a worker thread): a live session and its CSRF token."""

    def check(token: str | None, csrf: str | None) -> tuple[int, str] | None:
        conn = connect()
        try:
            found = auth.session_user(conn, token)
        finally:
            conn.close()
        if found is None:
            return 401, "sign in first"
        if not auth.same_token(found[1], csrf):
            return 403, "missing or wrong CSRF token: reload the page"
        return None

    return check
