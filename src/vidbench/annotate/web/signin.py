"""Signing in and out: the login form (double-submit CSRF token), throttled per account and
client pair (each attempt counted before its password is hashed) with the password hashes
bounded (throttle.py), and messages chosen by code: the page shows only its own texts, never one
taken from the URL."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from vidbench.annotate import auth
from vidbench.annotate.throttle import Busy
from vidbench.annotate.web import deps
from vidbench.annotate.web.deps import Conn, Signed, templates
from vidbench.annotate.web.limits import SIGN_IN

router = APIRouter()
MESSAGES = {
    "wrong": "Wrong name or password.",
    "signed-out": "You are signed out.",
}


def _login_page(
    request: Request, message: str, status: int = 200, retry_after: int | None = None
) -> Response:
    token = secrets.token_urlsafe(32)
    response = templates.TemplateResponse(
        request, "login.html", {"token": token, "error": message}, status_code=status
    )
    response.set_cookie(deps.LOGIN_COOKIE, token, httponly=True, samesite="strict")
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


@router.get("/login")
def login_page(request: Request, error: str = "") -> Response:
    return _login_page(request, MESSAGES.get(error, ""))


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.post("/login", max_body_size=SIGN_IN)
async def login(
    request: Request,
    conn: Conn,
    name: Annotated[str, Form(max_length=256)],
    password: Annotated[str, Form(max_length=auth.MAX_PASSWORD)],
    csrf: Annotated[str, Form(max_length=256)],
) -> Response:
    if not auth.same_token(request.cookies.get(deps.LOGIN_COOKIE, ""), csrf):
        return Response("missing or wrong CSRF token: reload the sign-in page", status_code=403)
    throttle, client = request.app.state.login_throttle, _client(request)
    user: auth.User | None = None
    wait = await run_in_threadpool(throttle.wait, conn, name, client)
    if not wait:  # not locked: wait for a hash slot, then count the attempt before hashing
        try:
            async with request.app.state.hash_slots.slot():
                wait = await run_in_threadpool(throttle.begin, conn, name, client)
                if not wait:
                    user = await run_in_threadpool(auth.check_password, conn, name, password)
        except Busy:
            message = "The server is busy signing others in: try again in a moment."
            return _login_page(request, message, 503, Busy.retry_after)
    if wait:
        message = f"Too many failed sign-ins: try again in {wait} s."
        return _login_page(request, message, 429, wait)
    if user is None:
        return RedirectResponse("/login?error=wrong", status_code=303)
    await run_in_threadpool(throttle.succeeded, conn, name, client)
    token, _ = await run_in_threadpool(auth.open_session, conn, user)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(deps.SESSION_COOKIE, token, httponly=True, samesite="strict")
    response.delete_cookie(deps.LOGIN_COOKIE)
    return response


@router.post("/logout")
def logout(request: Request, v: Signed) -> Response:
    auth.close_session(v.conn, request.cookies.get(deps.SESSION_COOKIE, ""))
    response = Response(status_code=204)
    response.delete_cookie(deps.SESSION_COOKIE)
    return response
