"""Saves refused by optimistic concurrency, kept so that no typing is ever lost.

A save naming an old version is refused (work.Conflict); when it carried the owner's text, the
text is kept here (one open row per piece of work, person and base version: a tab that keeps
sending on the same old version updates its row). The work's page offers open rows back to
their author, who restores (saves it over the current version) or discards them; a later save of
the same text resolves a row as well.
"""

from __future__ import annotations

import sqlite3

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.core.errors import DataError


def keep(
    conn: sqlite3.Connection,
    work_id: int,
    user_id: int,
    base_version: int,
    content: str,
    status: str | None,
) -> int:
    """Record a refused save (inside the caller's transaction); returns its row id."""
    found = conn.execute(
        "SELECT id FROM conflicts WHERE work_id = ? AND user_id = ? AND base_version = ? "
        "AND resolved IS NULL",
        (work_id, user_id, base_version),
    ).fetchone()
    if found is not None:
        conn.execute(
            "UPDATE conflicts SET content = ?, status = ?, at = ? WHERE id = ?",
            (content, status, db.now(), found["id"]),
        )
        return int(found["id"])
    cur = conn.execute(
        "INSERT INTO conflicts (work_id, user_id, base_version, content, status, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (work_id, user_id, base_version, content, status, db.now()),
    )
    return int(cur.lastrowid or 0)


def open_for(conn: sqlite3.Connection, work_id: int, user_id: int) -> list[dict[str, JsonValue]]:
    """This person's unresolved refused saves on this work, oldest first."""
    rows = conn.execute(
        "SELECT id, base_version, content, status, at FROM conflicts WHERE work_id = ? "
        "AND user_id = ? AND resolved IS NULL ORDER BY id",
        (work_id, user_id),
    )
    return [dict(r) for r in rows]


def resolve_saved(
    conn: sqlite3.Connection, work_id: int, user_id: int, content: str, ids: list[int]
) -> None:
    """After a save (inside its transaction): rows it named, or whose text it saved, are done."""
    marks = ",".join("?" * len(ids)) or "NULL"
    conn.execute(
        "UPDATE conflicts SET resolved = ? WHERE work_id = ? AND user_id = ? AND resolved IS NULL "
        f"AND (content = ? OR id IN ({marks}))",
        (db.now(), work_id, user_id, content, *ids),
    )


def discard(conn: sqlite3.Connection, work_id: int, user_id: int, conflict_id: int) -> None:
    """The author chose not to restore a kept text (it stays in the table, resolved)."""
    with db.transaction(conn):
        done = conn.execute(
            "UPDATE conflicts SET resolved = ? WHERE id = ? AND work_id = ? AND user_id = ? "
            "AND resolved IS NULL",
            (db.now(), conflict_id, work_id, user_id),
        ).rowcount
    if not done:
        raise DataError(f"no open kept text {conflict_id} of yours on work {work_id}")
