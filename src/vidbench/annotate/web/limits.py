"""Requests are checked before their bodies are read.

FastAPI reads and parses a request's body before it runs the dependencies that check the
session, so without this an unauthenticated client could make the server parse a 200 MB JSON
body or spool a 500 MB upload to disk before answering 401. `CheckFirst`, an ASGI middleware
around the app, answers before any body byte is read:

- a POST (or any method other than GET/HEAD/OPTIONS) to anything but the sign-in form needs a
  live session cookie and its CSRF header: 401 / 403 otherwise;
- a path with a control character (no route matches one) is a 400.

The body limits themselves are FastAPI's (`max_body_size`, Starlette's RequestBodyLimitMiddleware):
DEFAULT for the app, SIGN_IN for the sign-in form, UPLOAD for the queue upload. A Content-Length
over the limit is answered 413 before the body is read, and a body without one (chunked) is
counted as it streams and cut off with 413 when it passes the limit, so an upload is never
spooled beyond it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from vidbench.annotate import auth, db
from vidbench.annotate.project import Project
from vidbench.annotate.web.deps import SESSION_COOKIE, unusable_database

KIB = 1024
MAX_UPLOAD = 50 * KIB * KIB  # an uploaded review_queue.jsonl
UPLOAD = MAX_UPLOAD + 64 * KIB  # the file and the multipart framing
SIGN_IN = 16 * KIB
DEFAULT = 256 * KIB  # a save: 5000 characters of text, JSON-escaped at worst 6 bytes each
RETRY_AFTER = "5"  # seconds, of a 503: the database cannot be used now
PUBLIC_POSTS = ("/login",)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _session_token(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(raw)
    except CookieError:
        return None
    found = cookies.get(SESSION_COOKIE)
    return found.value if found else None


async def _answer(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers.append((b"connection", b"close"))  # the unread body is not waited for
    if status == 503:
        headers.append((b"retry-after", RETRY_AFTER.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


SessionCheck = Callable[[str | None, str | None], tuple[int, str] | None]


class CheckFirst:
    """ASGI middleware: the session before the body (see the module doc). `check_session(token,
    csrf)` answers None when both are good, else (status, message)."""

    def __init__(self, app: ASGIApp, check_session: SessionCheck) -> None:
        self.app = app
        self.check_session = check_session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        if any(ord(c) < 32 or ord(c) == 127 for c in path):
            await _answer(send, 400, "a path with a control character")
            return
        if method not in SAFE_METHODS and path not in PUBLIC_POSTS:
            token, csrf = _session_token(scope), _header(scope, b"x-csrf-token")
            refused = await run_in_threadpool(self.check_session, token, csrf)
            if refused is not None:
                await _answer(send, *refused)
                return
        await self.app(scope, receive, send)


def session_checker(project: Project) -> SessionCheck:
    """The check CheckFirst runs (in a worker thread): a live session and its CSRF token. Each
    worker thread keeps its own read connection (opening one costs about a millisecond of CPU,
    more than the query); a database that cannot be opened or read is a 503, to retry."""
    local = threading.local()

    def check(token: str | None, csrf: str | None) -> tuple[int, str] | None:
        try:
            if getattr(local, "conn", None) is None:
                local.conn = project.connect()
            found = auth.session_user(local.conn, token)
        except sqlite3.Error as e:
            local.conn = None
            if not db.unavailable(e):  # a bug: a 500 with its traceback logged
                raise
            return 503, unusable_database(project, e)
        if found is None:
            return 401, "sign in first"
        if not auth.same_token(found[1], csrf):
            return 403, "missing or wrong CSRF token: reload the page"
        return None

    return check
