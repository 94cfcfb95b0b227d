"""The FastAPI application: routers, static files, security headers and error pages.

Content-Security-Policy allows scripts, styles and media from this server only and no inline
script, so even a text that escaped escaping could not run; nothing is loaded from a CDN.
Requests are checked before their bodies are read (limits.py); sign-ins are throttled and the
password hashes running at once are bounded (throttle.py, state in `app.state`).
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from vidbench.annotate import db
from vidbench.annotate.adapters import Adapters
from vidbench.annotate.project import Project
from vidbench.annotate.throttle import HashSlots, LoginThrottle
from vidbench.annotate.web import (
    accounts,
    api,
    deps,
    limits,
    pages,
    redteam_routes,
    signin,
    thumbs,
)
from vidbench.annotate.web.limits import RETRY_AFTER, CheckFirst, session_checker
from vidbench.annotate.work import Conflict, NoSuchWork
from vidbench.core.errors import ConfigError, DataError

LOG = logging.getLogger(__name__)
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; media-src 'self'; "
    "img-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(("/api/", "/media/", "/thumb/"))


def create_app(project: Project, adapters: Adapters, judge: Any = None) -> FastAPI:
    """The app for a project; `adapters` say how the registered benchmarks' items come in and go
    out (exports, uploads, video links, red-team rules); `judge` (a ModelChoice, optional) runs
    red-team checks."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.project = project
    app.state.adapters = adapters
    app.state.judge = judge
    app.state.login_throttle = LoginThrottle()
    app.state.hash_slots = HashSlots()
    app.mount("/static", StaticFiles(directory=deps.HERE / "static"), name="static")
    # body limits per router (limits.py), not for the app: the app's limiter would sit outside
    # CheckFirst and answer 413 before an unauthenticated request is told 401
    routers = (signin, pages, api, accounts, redteam_routes, thumbs)
    for router in (module.router for module in routers):
        app.include_router(router, max_body_size=limits.DEFAULT)

    app.add_middleware(CheckFirst, check_session=session_checker(project))

    @app.middleware("http")  # outside CheckFirst: its refusals get these headers too
    async def headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.exception_handler(deps.NotSignedIn)
    async def not_signed_in(request: Request, exc: deps.NotSignedIn) -> Response:
        if _wants_json(request) or request.method != "GET":
            return JSONResponse({"error": "sign in first"}, status_code=401)
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(NoSuchWork)
    async def no_such_work(request: Request, exc: NoSuchWork) -> Response:
        return _error(request, 404, "no such work (or not yours)")

    @app.exception_handler(Conflict)
    async def conflict(request: Request, exc: Conflict) -> Response:
        from vidbench.annotate.work import public

        body = {"error": f"conflict: {exc}", "current": public(exc.current), "kept": exc.kept}
        return JSONResponse(body, status_code=409)

    @app.exception_handler(DataError)
    async def data_error(request: Request, exc: DataError) -> Response:
        return _error(request, 422, str(exc))

    @app.exception_handler(ConfigError)
    async def config_error(request: Request, exc: ConfigError) -> Response:
        return _error(request, 422, str(exc))

    @app.exception_handler(sqlite3.Error)
    async def database_error(request: Request, exc: sqlite3.Error) -> Response:
        """The database cannot be opened or written now (the project folder moved or removed
        while serving, a read-only folder, a full disk, a file cut short, a lock held too
        long): 503, which the pages retry with the text kept, never a traceback. Any other
        SQLite error is a bug (a statement SQLite cannot run, a broken constraint): a 500,
        with its traceback in the server's log, not a 503 blaming the database."""
        if not db.unavailable(exc):
            LOG.error("%s %s failed", request.method, request.url.path, exc_info=exc)
            return _error(request, 500, f"internal error ({type(exc).__name__}): see the log")
        response = _error(request, 503, deps.unusable_database(project, exc))
        response.headers["Retry-After"] = RETRY_AFTER
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return _error(request, 422, invalid_fields(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        response = _error(request, exc.status_code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    return app


def invalid_fields(exc: RequestValidationError) -> str:
    """What is wrong, field by field ("content: character 3 is a lone surrogate ..."); the
    values sent are not repeated (one that is not text could not even be written back)."""
    parts = []
    for error in exc.errors():
        loc = error["loc"]  # ("body" | "query" | "path", field, ...)
        where = ".".join(str(part) for part in loc[1:])
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _error(request: Request, status: int, message: str) -> Response:
    if _wants_json(request) or request.method != "GET":
        return JSONResponse({"error": message}, status_code=status)
    return deps.templates.TemplateResponse(
        request, "error.html", {"message": message, "status": status}, status_code=status
    )
