"""Work items in a project, of four kinds (KINDS): QA candidates to review (`qa`), objects to
caption (`caption`), questions to answer for a human baseline (`answer`) and judging rules to
red-team (`rule`). Each benchmark's importers (its ReviewAdapter, annotate/adapters.py) add them
through `add`, reading JSON Lines through `checked_lines`.

Every import reads record by record: a malformed line or record is reported with its file and
line (or id) and skipped, the rest is imported. An id already in the project is never
overwritten (what people did on it is kept); it is reported as skipped.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from vidbench.annotate import db
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines

Checked = TypeVar("Checked")
KINDS = ("qa", "caption", "answer", "rule")


@dataclass
class Imported:
    added: int = 0
    skipped: list[str] = field(default_factory=list)  # in the project before this import
    problems: list[str] = field(default_factory=list)  # malformed records, named
    # every id this import met: one met again (an object whose videos are in both of a
    # release's folders) is counted once, added or already there
    seen: set[str] = field(default_factory=set, repr=False)

    def merge(self, other: Imported) -> None:
        self.added += other.added
        self.skipped += [key for key in other.skipped if key not in self.seen]
        self.problems += other.problems
        self.seen |= other.seen


def item_id(kind: str, ref: str) -> str:
    return f"{kind}:{ref}"


def add(
    conn: sqlite3.Connection, kind: str, ref: str, data: dict[str, Any], source: str, out: Imported
) -> None:
    key = item_id(kind, ref)
    if key in out.seen:
        return
    out.seen.add(key)
    if conn.execute("SELECT 1 FROM items WHERE id = ?", (key,)).fetchone():
        out.skipped.append(key)
        return
    conn.execute(
        "INSERT INTO items (id, kind, ref, data, source, created) VALUES (?, ?, ?, ?, ?, ?)",
        (key, kind, ref, json.dumps(data, ensure_ascii=False), source, db.now()),
    )
    out.added += 1


def checked_lines(
    path: Path, check: Callable[[Any], Checked], out: Imported
) -> Iterator[tuple[int, Checked]]:
    """(line number, record) for each JSON line of `path` that `check` accepts; a line that is
    not UTF-8, not JSON, holds text that cannot be stored (an unpaired surrogate escape) or that
    `check` refuses goes to `out.problems`, named by file and line (core/files.json_lines)."""
    for line in json_lines(path):
        try:
            if line.error is not None:
                raise DataError(line.error)
            yield line.number, check(line.value)
        except DataError as e:
            out.problems.append(f"{line.where(path)}: {e}")


def delete(conn: sqlite3.Connection, key: str, author: str) -> None:
    """Withdraw an item: it leaves every queue and export; its work stays in the database."""
    with db.transaction(conn):
        if not conn.execute("UPDATE items SET deleted = 1 WHERE id = ?", (key,)).rowcount:
            raise DataError(f"no item {key!r}")
        db.log_event(conn, author, "item.delete", key)
