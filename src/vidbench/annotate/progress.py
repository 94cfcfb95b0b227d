"""Progress for the admin: per person and job, per task, and the latest logged writes; and for
reviewers, the captions waiting for review.

Rows are dataclasses, not dicts: a template reading `row.items` of a dict gets the dict's
`items` method, not the count (the admin page once showed `<built-in method items ...>`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from pydantic import JsonValue

from vidbench.annotate import db

STATUSES = ("todo", "draft", "submitted", "returned", "accepted")


@dataclass
class PersonProgress:
    name: str
    role: str
    job: str
    by_status: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))

    @property
    def total(self) -> int:
        return sum(self.by_status.values())

    @property
    def done(self) -> int:
        return self.by_status["submitted"] + self.by_status["accepted"]

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


@dataclass(frozen=True)
class TaskProgress:
    kind: str
    n_items: int  # live and withdrawn
    withdrawn: int
    assigned: int  # pieces of work
    unassigned: int  # live items nobody was given
    done: int  # pieces of work submitted or accepted

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.assigned) if self.assigned else 0


@dataclass(frozen=True)
class CaptionReview:
    """Written captions as a reviewer sees them: waiting (submitted), sent back, accepted."""

    waiting: int
    returned: int
    accepted: int

    @property
    def written(self) -> int:
        return self.waiting + self.returned + self.accepted

    @property
    def percent(self) -> int:  # reviewed: accepted or sent back
        return round(100 * (self.returned + self.accepted) / self.written) if self.written else 0


def per_person(conn: sqlite3.Connection) -> list[PersonProgress]:
    """One row per person and job: how many of their pieces of work are in each status (a
    removed person's role says so; their unfinished work, given back, is not counted)."""
    rows = conn.execute(
        "SELECT u.name, u.role || CASE WHEN u.removed IS NULL THEN '' ELSE ', removed' END "
        "AS role, w.job, w.status, COUNT(*) AS n FROM work w "
        "JOIN users u ON u.id = w.user_id JOIN items i ON i.id = w.item_id WHERE i.deleted = 0 "
        "AND w.status != ? GROUP BY u.id, w.job, w.status ORDER BY u.id, w.job",
        (db.RELEASED,),
    ).fetchall()
    table: dict[tuple[str, str, str], PersonProgress] = {}
    for r in rows:
        key = (r["name"], r["role"], r["job"])
        entry = table.setdefault(key, PersonProgress(*key))
        entry.by_status[r["status"]] = r["n"]
    return list(table.values())


def per_task(conn: sqlite3.Connection) -> list[TaskProgress]:
    """One row per item kind: items, withdrawn ones, pieces of work, how many are done, and the
    live items nobody was given (they are in no export until assigned)."""
    rows = conn.execute(
        "SELECT i.kind, COUNT(DISTINCT i.id) AS n_items, "
        "COUNT(DISTINCT CASE WHEN i.deleted = 1 THEN i.id END) AS withdrawn, "
        "COUNT(w.id) AS assigned, "
        "COUNT(DISTINCT CASE WHEN i.deleted = 0 AND w.id IS NULL THEN i.id END) AS unassigned, "
        "SUM(CASE WHEN w.status IN ('submitted', 'accepted') THEN 1 ELSE 0 END) AS done "
        "FROM items i LEFT JOIN work w ON w.item_id = i.id AND w.status != ? "
        "GROUP BY i.kind ORDER BY i.kind",
        (db.RELEASED,),
    ).fetchall()
    return [
        TaskProgress(
            r["kind"], r["n_items"], r["withdrawn"], r["assigned"], r["unassigned"], r["done"] or 0
        )
        for r in rows
    ]


def caption_review(conn: sqlite3.Connection) -> CaptionReview:
    counts = dict.fromkeys(("submitted", "returned", "accepted"), 0)
    for r in conn.execute(
        "SELECT w.status, COUNT(*) AS n FROM work w JOIN items i ON i.id = w.item_id "
        "WHERE w.job = 'write' AND i.deleted = 0 GROUP BY w.status"
    ):
        if r["status"] in counts:
            counts[r["status"]] = r["n"]
    return CaptionReview(counts["submitted"], counts["returned"], counts["accepted"])


def recent_events(conn: sqlite3.Connection, n: int = 20) -> list[dict[str, JsonValue]]:
    rows = conn.execute("SELECT * FROM events ORDER BY id DESC LIMIT ?", (n,)).fetchall()
    return [dict(r) for r in rows]
