"""The HTML pages: sign in, my work, one piece of work (by job), caption review, admin."""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from vidbench.annotate import auth, progress, work
from vidbench.annotate.web import deps
from vidbench.annotate.web.deps import Admin, Conn, Reviewer, Signed, templates
from vidbench.benchmarks.fourd.loader import VIEWS_PER_OBJECT

router = APIRouter()
TITLES = {
    "write": "Write a caption",
    "review": "Review a QA candidate",
    "answer": "Answer",
    "redteam": "Red-team a rule",
}


def _page(request: Request, v: deps.Viewer, name: str, **context: Any) -> Response:
    return templates.TemplateResponse(request, name, {"user": v.user, "csrf": v.csrf, **context})


@router.get("/login")
def login_page(request: Request, error: str = "") -> Response:
    token = secrets.token_urlsafe(32)
    response = templates.TemplateResponse(request, "login.html", {"token": token, "error": error})
    response.set_cookie(deps.LOGIN_COOKIE, token, httponly=True, samesite="strict")
    return response


@router.post("/login")
def login(
    request: Request,
    conn: Conn,
    name: Annotated[str, Form()],
    password: Annotated[str, Form()],
    csrf: Annotated[str, Form()],
) -> Response:
    if not auth.same_token(request.cookies.get(deps.LOGIN_COOKIE, ""), csrf):
        return Response("missing or wrong CSRF token: reload the sign-in page", status_code=403)
    user = auth.check_password(conn, name, password)
    if user is None:
        return RedirectResponse("/login?error=wrong+name+or+password", status_code=303)
    token, _ = auth.open_session(conn, user)
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


@router.get("/")
def home(request: Request, v: Signed) -> Response:
    return _page(request, v, "home.html", work=work.mine(v.conn, v.user), titles=TITLES)


def _views(request: Request, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The videos to show: ?views=1,8,16 picks views (default all 24); each with whether the
    file exists, so a missing video is named on the page instead of failing silently."""
    paths = data.get("views") or ([data["video"]] if data.get("video") else [])
    chosen = request.query_params.get("views", "")
    wanted = [int(k) for k in chosen.split(",") if k.strip().isdigit()] if chosen else None
    root = request.app.state.project.data
    out = []
    for k, path in enumerate(paths):
        if wanted is not None and len(paths) == VIEWS_PER_OBJECT and k not in wanted:
            continue
        out.append({"view": k, "path": path, "exists": (root / path).is_file()})
    return out


@router.get("/work/{work_id}")
def work_page(request: Request, work_id: int, v: Signed) -> Response:
    found = work.get(v.conn, work_id, v.user)
    shown = work.public(found)
    if found["job"] == "redteam":
        from vidbench.annotate.web.redteam_routes import history

        extra = {"history": history(request, found)}
    else:
        extra = {}
    return _page(
        request,
        v,
        f"{found['job']}.html",
        w=shown,
        views=_views(request, found["data"]),
        state=json.dumps({"id": work_id, "version": found["version"], "job": found["job"]}),
        title=TITLES[found["job"]],
        **extra,
    )


@router.get("/review/captions")
def review_captions(request: Request, v: Reviewer) -> Response:
    rows = v.conn.execute(
        "SELECT w.id, w.item_id, w.content, w.status, w.comment, w.version, w.updated_at, "
        "u.name AS owner FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE w.job = 'write' AND i.deleted = 0 "
        "AND w.status IN ('submitted', 'returned', 'accepted') ORDER BY w.item_id, w.slot"
    ).fetchall()
    return _page(request, v, "review_captions.html", rows=[dict(r) for r in rows])


@router.get("/admin")
def admin_page(request: Request, v: Admin) -> Response:
    from vidbench.annotate.exports import review_agreement

    return _page(
        request,
        v,
        "admin.html",
        people=progress.per_person(v.conn),
        tasks=progress.per_task(v.conn),
        agreement=review_agreement(v.conn),
        events=progress.recent_events(v.conn),
    )
