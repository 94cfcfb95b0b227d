"""Progress for the admin: per person and job, per task, and the latest logged writes."""

from __future__ import annotations

import sqlite3
from typing import Any

STATUSES = ("todo", "draft", "submitted", "returned", "accepted")


def per_person(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """One row per person and job: how many of their pieces of work are in each status."""
    rows = conn.execute(
        "SELECT u.name, u.role, w.job, w.status, COUNT(*) AS n FROM work w "
        "JOIN users u ON u.id = w.user_id JOIN items i ON i.id = w.item_id WHERE i.deleted = 0 "
        "GROUP BY u.name, u.role, w.job, w.status ORDER BY u.id, w.job"
    ).fetchall()
    table: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        entry = table.setdefault(
            (r["name"], r["role"], r["job"]),
            {"name": r["name"], "role": r["role"], "job": r["job"], **dict.fromkeys(STATUSES, 0)},
        )
        entry[r["status"]] = r["n"]
    for entry in table.values():
        entry["total"] = sum(entry[s] for s in STATUSES)
    return list(table.values())


def per_task(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """One row per item kind: live items, withdrawn ones, pieces of work and how many are done."""
    rows = conn.execute(
        "SELECT i.kind, COUNT(DISTINCT i.id) AS items, "
        "COUNT(DISTINCT CASE WHEN i.deleted = 1 THEN i.id END) AS withdrawn, "
        "COUNT(w.id) AS assigned, "
        "SUM(CASE WHEN w.status IN ('submitted', 'accepted') THEN 1 ELSE 0 END) AS done "
        "FROM items i LEFT JOIN work w ON w.item_id = i.id GROUP BY i.kind ORDER BY i.kind"
    ).fetchall()
    return [dict(r) for r in rows]


def recent_events(conn: sqlite3.Connection, n: int = 20) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT * FROM events ORDER BY id DESC LIMIT ?", (n,)).fetchall()
    return [dict(r) for r in rows]
