"""The HTML pages: my work (progress per task, filters and search, each item with its title,
question and thumbnail, grouped by task and status), one piece of work (by job: the question and
the official views first at the width of the screen, the other views one click away, previous,
next and submit-and-next, texts kept from refused saves offered back; the next unfinished item's
videos are fetched ahead), caption review (with the object's videos), admin. Signing in and
out: signin.py. Keys: static/keys.js."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from vidbench.annotate import auth, conflicts, items, progress, work
from vidbench.annotate.web import deps
from vidbench.annotate.web.deps import Admin, Reviewer, RowId, Signed, templates

router = APIRouter()
TITLES = {
    "write": "Write a caption",
    "review": "Review a QA candidate",
    "answer": "Answer",
    "redteam": "Red-team a rule",
    "audit": "Keep, fix or drop a flagged item",
}
TASKS = {  # the same jobs as the home page and the filter name them
    "review": "QA review",
    "write": "captions",
    "answer": "answers",
    "redteam": "red-team rules",
    "audit": "audit queue",
}
GROUPS = {  # the home page's groups per task, in this order (label, shown open)
    "returned": ("sent back to you", True),
    "todo": ("to do", True),
    "draft": ("started", True),
    "submitted": ("submitted", False),
    "accepted": ("accepted", False),
}
STATUS_FILTERS = {  # the home page's status filter: its values and the statuses each shows
    "open": ("not finished", work.OPEN_STATUSES),
    **{status: (label, (status,)) for status, (label, _) in GROUPS.items()},
}
# a search may be a whole question pasted from elsewhere (hundreds of characters); the box in the
# page takes no more than the server reads
SEARCH_MAX = 2000
Filter = Annotated[str, Query(max_length=SEARCH_MAX)]
# the items My work lists on one page (the counts above them are of all): a reviewer with 30,000
# items was sent 15 MB of rows the browser laid out before the page could be used
PAGE_ROWS = 200


def _page(request: Request, v: deps.Viewer, name: str, **context: Any) -> Response:
    return templates.TemplateResponse(request, name, {"user": v.user, "csrf": v.csrf, **context})


@router.get("/")
def home(
    request: Request,
    v: Signed,
    task: Filter = "",
    status: Filter = "",
    flag: Filter = "",
    q: Filter = "",
    page: Annotated[int, Query(ge=1, le=10**6)] = 1,
) -> Response:
    rows = work.mine(v.conn, v.user)
    shown = _filtered(rows, task, status, flag, q)
    chosen = {"task": task, "status": status, "flag": flag, "q": q}
    pages = max(1, -(-len(shown) // PAGE_ROWS))
    page = min(page, pages)
    tasks = _grouped(shown, PAGE_ROWS * (page - 1), PAGE_ROWS)
    for listed in (r for t in tasks for g in t["groups"] for r in g["rows"]):
        _item(listed)  # the rows on this page, as a person reads them
    return _page(
        request,
        v,
        "home.html",
        title="My work",
        progress=_progress(rows),
        tasks=tasks,
        shown=len(shown),
        total=len(rows),
        pager=_pager(request, page, pages, len(shown)),
        chosen=chosen,
        filtering=any(chosen.values()),
        task_choices={job: TASKS[job] for job in TASKS if any(r["job"] == job for r in rows)},
        status_choices={k: label for k, (label, _) in STATUS_FILTERS.items()},
        captions=progress.caption_review(v.conn) if v.user.reviews else None,
        search_max=SEARCH_MAX,
    )


def _item(row: dict[str, Any]) -> items.Described:
    """A home-page row's item as a person reads it (its `item`, made when first asked: only the
    rows a search reads or a page shows are)."""
    if "item" not in row:
        row["item"] = items.describe(row["kind"], json.loads(row["data"]))
    described: items.Described = row["item"]
    return described


def _filtered(
    rows: list[dict[str, Any]], task: str, status: str, flag: str, q: str
) -> list[dict[str, Any]]:
    """The rows the filters keep: task (a job), status (or `open`), flag (`yes`/`no`) and every
    word of `q` in the item's title, question, id or comment (any case)."""
    statuses = STATUS_FILTERS.get(status, ("", ()))[1]
    words = q.casefold().split()
    out = []
    for r in rows:
        if (task and r["job"] != task) or (statuses and r["status"] not in statuses):
            continue
        if not flag and not words:
            out.append(r)
            continue
        described = _item(r)
        if flag and (described.flag is not None) != (flag == "yes"):
            continue
        text = " ".join(
            (described.title, described.question, r["item_id"], r["comment"] or "")
        ).casefold()
        if all(word in text for word in words):
            out.append(r)
    return out


def _progress(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task: how many are done (submitted or accepted), sent back, and the first that still
    needs this person (a link to start or go on)."""
    out = []
    for job, title in TASKS.items():
        mine = [r for r in rows if r["job"] == job]
        if not mine:
            continue
        done = sum(r["status"] in ("submitted", "accepted") for r in mine)
        waiting = [r for r in mine if r["status"] in work.OPEN_STATUSES]
        returned = sum(r["status"] == "returned" for r in mine)
        out.append(
            {
                "job": job,
                "title": title,
                "total": len(mine),
                "done": done,
                "returned": returned,
                "percent": round(100 * done / len(mine)),
                "next": waiting[0]["id"] if waiting else None,
            }
        )
    return out


def _grouped(rows: list[dict[str, Any]], start: int, size: int) -> list[dict[str, Any]]:
    """[{job, title, total, counts, groups: [{status, label, open, count, rows}]}] in TITLES and
    GROUPS order: the counts of all `rows` (`counts`: (label, n) of each status it has), and as
    `rows` the `size` of them from `start` in that order (one page of the list; a task or group
    with none of them on this page is left out)."""
    out, at = [], 0
    for job, title in TITLES.items():
        mine = [r for r in rows if r["job"] == job]
        groups, counts = [], []
        for status, (label, shown) in GROUPS.items():
            chosen = [r for r in mine if r["status"] == status]
            here = chosen[max(0, start - at) : max(0, start + size - at)]
            at += len(chosen)
            if chosen:
                counts.append((label, len(chosen)))
            if here:
                group = {"status": status, "label": label, "open": shown, "count": len(chosen)}
                groups.append({**group, "rows": here})
        if groups:
            out.append(
                {"job": job, "title": title, "total": len(mine), "counts": counts, "groups": groups}
            )
    return out


def _pager(request: Request, page: int, pages: int, shown: int) -> dict[str, Any] | None:
    """The links to the pages of the list around this one (the filters kept), or None when it
    fits on one."""
    if pages == 1:
        return None

    def link(n: int) -> str:
        url = request.url.include_query_params(page=n)
        return f"{url.path}?{url.query}"

    first = PAGE_ROWS * (page - 1) + 1
    return {
        "page": page,
        "pages": pages,
        "first": first,
        "last": min(shown, first + PAGE_ROWS - 1),
        "previous": link(page - 1) if page > 1 else None,
        "next": link(page + 1) if page < pages else None,
    }


def _views(data: dict[str, Any], chosen: str = "") -> list[dict[str, Any]]:
    """The videos to show, each with whether it is one of the first shown (`main`) and whether
    the file exists (a missing video is named on the page instead of failing silently).
    `chosen` ("1,8,16", the page's ?views=) shows exactly those views; by default the views the
    item names first (its benchmark's official input, e.g. 4D-Bench's 1, 8, 16) come first, at
    the width of the screen, and the other views are one click away."""
    paths = data.get("views") or ([data["video"]] if data.get("video") else [])
    wanted = [int(k) for k in chosen.split(",") if k.strip().isdigit()] if chosen else None
    first = data.get("first_views")  # None: every view is shown alike
    out = []
    for k, path in enumerate(paths):
        if wanted is not None and first is not None and k not in wanted:
            continue
        main = first is None or wanted is not None or k in first
        out.append({"view": k, "path": path, "main": main})
    return out


def _checked_views(request: Request, data: dict[str, Any], chosen: str = "") -> list[dict]:
    root = request.app.state.project.data
    return [{**v, "exists": (root / v["path"]).is_file()} for v in _views(data, chosen)]


@router.get("/work/{work_id}")
def work_page(request: Request, work_id: RowId, v: Signed) -> Response:
    found = work.get(v.conn, work_id, v.user)
    shown = work.public(found)
    if found["job"] == "redteam":
        from vidbench.annotate.web.redteam_routes import history

        extra = {"history": history(request, found)}
    else:
        extra = {}
    mine = found["user_id"] == v.user.id
    where = work.place(v.conn, v.user, found) if mine else None
    preload = []  # the next unfinished item's first videos, fetched while this one is worked on
    if where is not None and where.next_open is not None:
        following = work.row(v.conn, where.next_open)
        if following is not None:
            preload = [view["path"] for view in _views(following["data"]) if view["main"]]
    described = items.describe(found["kind"], found["data"])
    state = {"id": work_id, "version": found["version"], "job": found["job"]}
    return _page(
        request,
        v,
        f"{found['job']}.html",
        w=shown,
        item=described,
        views=_checked_views(request, found["data"], request.query_params.get("views", "")),
        state=json.dumps(state),
        title=f"{TITLES[found['job']]}: {described.title}",
        job_title=TITLES[found["job"]],
        task_title=TASKS[found["job"]],
        said=work.last_change(found, v.user),
        kept=conflicts.open_for(v.conn, work_id, v.user.id) if mine else [],
        steps=work.history(v.conn, found, v.user),
        place=where,
        preload_next=preload,
        letters=work.LETTERS,
        **extra,
    )


@router.get("/review/captions")
def review_captions(request: Request, v: Reviewer) -> Response:
    """Written captions per object, with the object's official views to check them against
    (at the width of the screen, as on the work pages); a reviewer's own captions are shown
    without the buttons (nobody reviews their own work)."""
    rows = v.conn.execute(
        "SELECT w.id, w.item_id, w.user_id, w.content, w.status, w.comment, w.version, "
        "w.updated_at, i.data, u.name AS owner FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE w.job = 'write' AND i.deleted = 0 "
        "AND w.status IN ('submitted', 'returned', 'accepted') ORDER BY w.item_id, w.slot"
    ).fetchall()
    objects: dict[str, dict[str, Any]] = {}
    for r in rows:
        data = json.loads(r["data"])
        entry = objects.setdefault(r["item_id"], {"id": r["item_id"], "rows": []})
        if "views" not in entry:
            entry["views"] = [view for view in _checked_views(request, data) if view["main"]]
            entry["item"] = items.describe("caption", data)
        row = dict(r)
        del row["data"]
        row["yours"] = r["user_id"] == v.user.id
        if row["status"] == "returned":  # as sent back: the writer's new draft is not shown
            row["content"] = work.reviewed_text(v.conn, row["id"])
        entry["rows"].append(row)
    return _page(
        request,
        v,
        "review_captions.html",
        objects=list(objects.values()),
        captions=progress.caption_review(v.conn),
        title="Caption review",
    )


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
        accounts=auth.users(v.conn),
        roles=auth.ROLES,
        title="Admin",
    )
