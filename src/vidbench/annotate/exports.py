"""What the review app's exports share: people's work on live items, what was never assigned,
the human-baseline answers of one annotator (JSON Lines {"id", "answer"}, for the predictions
backend), the double-review agreement, and `export_kind`, which runs an export by name: the
benchmarks' own exports (their ReviewAdapter's exporters) or `answers`.

Nothing leaves silently: every export lists under `left_out` what it did not write and why,
live items that were never assigned to anyone included.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import TypedDict

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.annotate.adapters import Adapters
from vidbench.annotate.items import Exported
from vidbench.annotate.paths import child, file_name, writing_into
from vidbench.annotate.project import Project
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import Json, json_object, write_jsonl
from vidbench.scoring.agreement import cohen_kappa

DONE = ("submitted", "accepted")


class LiveWork(db.WorkRow):
    """A row of `work` on a live item, with the item's data (JSON text) and ref, and the name
    of the person it was given to."""

    data: str
    ref: str
    owner: str


class Unassigned(TypedDict):
    id: str
    data: dict[str, JsonValue]


def live_work(conn: sqlite3.Connection, kind: str, job: str) -> dict[str, list[LiveWork]]:
    """item id -> its work rows (slot order), for live items of a kind."""
    rows = conn.execute(
        "SELECT w.*, i.data, i.ref, u.name AS owner FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE i.kind = ? AND w.job = ? AND i.deleted = 0 "
        "AND w.status != ? ORDER BY w.item_id, w.slot",
        (kind, job, db.RELEASED),
    )
    out: dict[str, list[LiveWork]] = defaultdict(list)
    for r in rows:
        out[r["item_id"]].append(
            LiveWork(
                id=r["id"],
                item_id=r["item_id"],
                user_id=r["user_id"],
                job=r["job"],
                slot=r["slot"],
                content=r["content"],
                status=r["status"],
                comment=r["comment"],
                version=r["version"],
                updated_by=r["updated_by"],
                updated_at=r["updated_at"],
                data=r["data"],
                ref=r["ref"],
                owner=r["owner"],
            )
        )
    return out


def unassigned(conn: sqlite3.Connection, kind: str, job: str) -> list[Unassigned]:
    """Live items of a kind that nobody was given for `job` (id and data): in no export yet."""
    rows = conn.execute(
        "SELECT i.id, i.data FROM items i WHERE i.kind = ? AND i.deleted = 0 AND NOT EXISTS "
        "(SELECT 1 FROM work w WHERE w.item_id = i.id AND w.job = ? AND w.status != ?) "
        "ORDER BY i.id",
        (kind, job, db.RELEASED),
    )
    return [Unassigned(id=r["id"], data=json.loads(r["data"])) for r in rows]


def work_and_unassigned(
    conn: sqlite3.Connection, kind: str, job: str
) -> tuple[dict[str, list[LiveWork]], list[Unassigned]]:
    """`live_work` and `unassigned` read in one snapshot: an item assigned while an export runs
    is in one of the two, never in neither (left out of the file and of its `left_out`)."""
    with db.snapshot(conn):
        return live_work(conn, kind, job), unassigned(conn, kind, job)


def not_assigned(items: list[Unassigned]) -> list[str]:
    return [f"{item['id']}: not assigned to anyone" for item in items]


def review_of(work: LiveWork) -> dict[str, JsonValue]:
    """A reviewer's saved review (decision, edited record, note); empty before one is saved."""
    return (
        json_object(json.loads(work["content"]), f"review {work['id']}") if work["content"] else {}
    )


def submitted_answer(work: LiveWork) -> bool:
    """An answer its annotator submitted: a chosen option is saved as a draft at once, and a
    draft is not an answer yet (they may still change it)."""
    return work["status"] in DONE and bool(work["content"])


def export_answers(
    conn: sqlite3.Connection, user: str, benchmark: str, path: Path, author: str
) -> Exported:
    out = Exported(path)
    found = conn.execute("SELECT id FROM users WHERE name = ?", (user,)).fetchone()
    if found is None:
        raise ConfigError(f"no user {user!r}")
    lines = []
    given, left = work_and_unassigned(conn, "answer", "answer")
    for works in given.values():
        for w in works:
            item = json_object(json.loads(w["data"]), f"item {w['item_id']}")
            if w["user_id"] != found["id"] or item.get("benchmark") != benchmark:
                continue
            if submitted_answer(w):
                lines.append({"id": item.get("id"), "answer": w["content"]})
            else:
                why = "answer chosen, not submitted" if w["content"] else "not answered"
                out.left_out.append(f"{item.get('id')}: {why}")
    for nobodys in left:
        if nobodys["data"].get("benchmark") == benchmark:
            out.left_out.append(f"{nobodys['data'].get('id')}: not assigned to anyone")
    write_jsonl(path, lines)
    out.written = len(lines)
    with db.transaction(conn):
        db.log_event(conn, author, "export.answers", f"{path}: {user} {benchmark} {len(lines)}")
    return out


def review_agreement(conn: sqlite3.Connection) -> dict[str, Json]:
    """Double review: items with two submitted reviews, agreement on keep (accept or edit)
    vs reject, with Cohen's kappa (scoring/agreement.py)."""
    # the submitted reviews of the items that have two or more, alone: the admin page asks on
    # every visit, and reading every review with its item (a project of 100,000 items) took
    # most of a second
    rows = conn.execute(
        "SELECT w.id, w.item_id, w.content FROM work w WHERE w.job = 'review' "
        "AND w.status = 'submitted' AND w.item_id IN (SELECT v.item_id FROM work v "
        "JOIN items i ON i.id = v.item_id WHERE v.job = 'review' AND v.status = 'submitted' "
        "AND i.kind = 'qa' AND i.deleted = 0 GROUP BY v.item_id HAVING COUNT(*) >= 2) "
        "ORDER BY w.item_id, w.slot"
    )
    reviewed: dict[str, list[dict[str, JsonValue]]] = defaultdict(list)
    for r in rows:
        reviewed[r["item_id"]].append(json_object(json.loads(r["content"]), f"review {r['id']}"))
    pairs = []
    for done in reviewed.values():
        first, second = (int(r["decision"] != "reject") for r in done[:2])
        pairs.append((first, second))
    agree = sum(1 for a, b in pairs if a == b)
    kappa = cohen_kappa(pairs)
    return {
        "n": len(pairs),
        "agreement": round(100 * agree / len(pairs), 2) if pairs else None,
        "kappa": None if kappa is None else round(kappa, 4),
    }


def export_kind(
    project: Project,
    conn: sqlite3.Connection,
    kind: str,
    author: str,
    user: str | None,
    benchmark: str,
    adapters: Adapters,
) -> Exported:
    """One export into PROJECT/exports/ (shared by the admin page and the CLI): a benchmark's
    own (`qa`, `captions`, `raters`, `rules`, ...) or one annotator's `answers` to a benchmark's
    questions. (The audit queue's, `audit`, is audit_queue.export_audit, which reads the work
    through this module.)"""
    out = project.path / "exports"
    if kind != "answers":
        exporter = adapters.exporter(kind)
        with writing_into(out, "the export"):
            return exporter.write(project, conn, out, author)
    if not user:
        raise DataError("answers export: name the user")
    if benchmark not in adapters.benchmarks():
        known = ", ".join(adapters.benchmarks())
        raise ConfigError(f"answers export: no benchmark {benchmark!r} here; known: {known}")
    # a name is never a path: `x/../../elsewhere` gives one file inside OUT (paths.py)
    path = child(out, file_name(f"{benchmark}-{user}", ".jsonl"))
    with writing_into(out, "the export"):
        return export_answers(conn, user, benchmark, path, author)
