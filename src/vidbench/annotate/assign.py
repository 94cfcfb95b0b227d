"""Who does what: each item of a kind goes to N distinct people of the right role, the least
loaded first (ties by user id, so assignment is deterministic). Running it again tops up items
with fewer than N people (new users, new items) and never takes work away from anyone."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from vidbench.annotate import db
from vidbench.core.errors import ConfigError


@dataclass(frozen=True)
class Job:
    kind: str  # the item kind
    job: str  # what the person does with it
    roles: tuple[str, ...]  # who may be given it
    default_n: int


JOBS = {
    "caption": Job("caption", "write", ("annotator",), 5),  # five captions per object
    "qa": Job("qa", "review", ("reviewer", "admin"), 1),  # 2: double review
    "answer": Job("answer", "answer", ("annotator",), 1),  # 3 for MMWorld's raters
    "rule": Job("rule", "redteam", ("annotator",), 1),
}


def assign(conn: sqlite3.Connection, kind: str, n: int | None, author: str) -> int:
    """Give every live item of `kind` to `n` distinct people; returns how many were added."""
    spec = JOBS[kind]
    n = spec.default_n if n is None else n
    marks = ",".join("?" * len(spec.roles))
    people = [
        r["id"]
        for r in conn.execute(
            f"SELECT id FROM users WHERE role IN ({marks}) ORDER BY id", spec.roles
        )
    ]
    if len(people) < n:
        raise ConfigError(
            f"{kind} items need {n} distinct {' or '.join(spec.roles)}s each; the project has "
            f"{len(people)} (add users with `vidbench annotate users add`)"
        )
    added = 0
    with db.transaction(conn):
        load = {p: 0 for p in people}
        for row in conn.execute(
            "SELECT user_id, COUNT(*) AS c FROM work WHERE job = ? GROUP BY user_id", (spec.job,)
        ):
            if row["user_id"] in load:
                load[row["user_id"]] = row["c"]
        items = conn.execute(
            "SELECT id FROM items WHERE kind = ? AND deleted = 0 ORDER BY id", (kind,)
        ).fetchall()
        for item in items:
            have = {
                r["user_id"]: r["slot"]
                for r in conn.execute(
                    "SELECT user_id, slot FROM work WHERE item_id = ? AND job = ?",
                    (item["id"], spec.job),
                )
            }
            free = sorted((p for p in people if p not in have), key=lambda p: (load[p], p))
            slot = max(have.values(), default=0)
            for person in free[: max(0, n - len(have))]:
                slot += 1
                conn.execute(
                    "INSERT INTO work (item_id, user_id, job, slot) VALUES (?, ?, ?, ?)",
                    (item["id"], person, spec.job, slot),
                )
                load[person] += 1
                added += 1
        db.log_event(conn, author, "assign", f"{kind} x{n}: {added} added")
    return added
