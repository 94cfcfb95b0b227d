"""The HTML pages: my work (grouped by task and status), one piece of work (by job: the
question and the official views first, the other views one click away, a next-item link, texts
kept from refused saves offered back), caption review (with the object's videos), admin.
Signing in and out: signin.py."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from vidbench.annotate import conflicts, progress, work
from vidbench.annotate.web import deps
from vidbench.annotate.web.deps import Admin, Reviewer, Signed, templates

router = APIRouter()
TITLES = {
    "write": "Write a caption",
    "review": "Review a QA candidate",
    "answer": "Answer",
    "redteam": "Red-team a rule",
}
GROUPS = {  # the home page's groups per task, in this order (label, shown open)
    "returned": ("sent back to you", True),
    "todo": ("to do", True),
    "draft": ("started", True),
    "submitted": ("submitted", False),
    "accepted": ("accepted", False),
}


def _page(request: Request, v: deps.Viewer, name: str, **context: Any) -> Response:
    return templates.TemplateResponse(request, name, {"user": v.user, "csrf": v.csrf, **context})


@router.get("/")
def home(request: Request, v: Signed) -> Response:
    return _page(request, v, "home.html", tasks=_grouped(work.mine(v.conn, v.user)))


def _grouped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{job, title, total, groups: [{status, label, open, rows}]}] in TITLES and GROUPS order."""
    out = []
    for job, title in TITLES.items():
        mine = [r for r in rows if r["job"] == job]
        groups = []
        for status, (label, shown) in GROUPS.items():
            chosen = [r for r in mine if r["status"] == status]
            if chosen:
                groups.append({"status": status, "label": label, "open": shown, "rows": chosen})
        if mine:
            out.append({"job": job, "title": title, "total": len(mine), "groups": groups})
    return out


def _views(request: Request, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The videos to show, each with whether it is one of the first shown (`main`) and whether
    the file exists (a missing video is named on the page instead of failing silently).
    ?views=1,8,16 shows exactly those views; by default the views the item names first (its
    benchmark's official input, e.g. 4D-Bench's 1, 8, 16) come first, larger, and the other
    views are one click away."""
    paths = data.get("views") or ([data["video"]] if data.get("video") else [])
    chosen = request.query_params.get("views", "")
    wanted = [int(k) for k in chosen.split(",") if k.strip().isdigit()] if chosen else None
    first = data.get("first_views")  # None: every view is shown alike
    root = request.app.state.project.data
    out = []
    for k, path in enumerate(paths):
        if wanted is not None and first is not None and k not in wanted:
            continue
        main = first is None or wanted is not None or k in first
        out.append({"view": k, "path": path, "exists": (root / path).is_file(), "main": main})
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
    mine = found["user_id"] == v.user.id
    return _page(
        request,
        v,
        f"{found['job']}.html",
        w=shown,
        views=_views(request, found["data"]),
        state=json.dumps({"id": work_id, "version": found["version"], "job": found["job"]}),
        title=TITLES[found["job"]],
        kept=conflicts.open_for(v.conn, work_id, v.user.id) if mine else [],
        next_id=work.next_open(v.conn, v.user, found) if mine else None,
        **extra,
    )


@router.get("/review/captions")
def review_captions(request: Request, v: Reviewer) -> Response:
    """Written captions per object, with the object's official views to check them against."""
    rows = v.conn.execute(
        "SELECT w.id, w.item_id, w.content, w.status, w.comment, w.version, w.updated_at, "
        "i.data, u.name AS owner FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE w.job = 'write' AND i.deleted = 0 "
        "AND w.status IN ('submitted', 'returned', 'accepted') ORDER BY w.item_id, w.slot"
    ).fetchall()
    objects: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = objects.setdefault(r["item_id"], {"id": r["item_id"], "rows": []})
        if "views" not in entry:
            views = _views(request, json.loads(r["data"]))
            entry["views"] = [view for view in views if view["main"]]
        row = dict(r)
        del row["data"]
        if row["status"] == "returned":  # as sent back: the writer's new draft is not shown
            row["content"] = work.reviewed_text(v.conn, row["id"])
        entry["rows"].append(row)
    return _page(request, v, "review_captions.html", objects=list(objects.values()))


@router.get("/admin")
def admin_page(request: Request, v: Admin) -> Response:
    from vidbench.annotate.exports import review_agreement

    return _page(
        request,
        v,
        "admin.html",
        people=progress.per_person(v.conn),
        statuses=progress.STATUSES,
        tasks=progress.per_task(v.conn),
        agreement=review_agreement(v.conn),
        events=progress.recent_events(v.conn),
    )
