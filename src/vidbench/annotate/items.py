"""Work items in a project, of five kinds (KINDS): QA candidates to review (`qa`), objects to
caption (`caption`), questions to answer for a human baseline (`answer`), judging rules to
red-team (`rule`) and the items an audit flagged, to keep, fix or drop (`audit`:
audit_queue.py). Each benchmark's importers (its ReviewAdapter, annotate/adapters.py) add them
through `add_item`, reading JSON Lines through `checked_lines`, and say what they brought in
(`Imported`); its exporters say what they wrote and left out (`Exported`).

Every import reads record by record: a malformed line or record is reported with its file and
line (or id) and skipped, the rest is imported. An id already in the project is never
overwritten (what people did on it is kept); it is reported as skipped.

What every page shows of an item comes from its data, whatever benchmark it came from
(`describe`): the object or video it is about (`uid`, else `video`), its task (`Category`), its
question (`Question`), a video for its thumbnail (the first of `first_views` in `views`, else
`video`), and a flag when the item carries one. A flag is how another tool (an audit of a
finished benchmark, say) sends an item to people with a question about it: the item's `flag`
field, either a text (the reason) or an object `{"reason": TEXT, "suggested": ANY, "by": TEXT}`
(`suggested`: e.g. the gold answer the tool proposes). The home list filters on it and the item's
page shows it above the work.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.core.errors import DataError
from vidbench.core.files import Json, json_lines

Checked = TypeVar("Checked")
KINDS = ("qa", "caption", "answer", "rule", "audit")


@dataclass
class Imported:
    """What an import brought in: items added, ids already there, records it could not read."""

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


def add_item(
    conn: sqlite3.Connection,
    kind: str,
    ref: str,
    data: Mapping[str, Json],
    source: str,
    out: Imported,
) -> None:
    """One item of KIND (qa, caption, answer, rule) for the app, named REF, holding `data`, read
    from `source`; an item already there is kept as it is (counted in `out.skipped`)."""
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


@dataclass(frozen=True)
class Flag:
    reason: str
    suggested: JsonValue = None  # what the flagging tool proposes instead (e.g. a gold answer)
    by: str = ""  # who or what flagged it


@dataclass(frozen=True)
class Described:
    """An item as a person reads it in a list or a heading."""

    title: str  # e.g. "object 098d12c5…9704 · Action", "video workshop", "instance 17"
    question: str  # the question's text, "" when the item has none
    thumbnail: str | None  # a video (relative to the data folder) to take a thumbnail from
    flag: Flag | None


HEX_NAME = re.compile(r"[0-9a-f]{16,}")


def subject(data: Mapping[str, JsonValue]) -> str | None:
    """The object or video an item is about (its `uid`, else its `video`), or None."""
    for key in ("uid", "video"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _subject_name(data: Mapping[str, JsonValue]) -> str | None:
    uid, video = data.get("uid"), data.get("video")
    if isinstance(uid, str) and uid:
        return f"object {f'{uid[:8]}…{uid[-4:]}' if HEX_NAME.fullmatch(uid) else uid}"  # a hash
    if isinstance(video, str) and video:
        return f"video {PurePosixPath(video).stem}"
    return None


def thumbnail(data: Mapping[str, JsonValue]) -> str | None:
    """The video an item's thumbnail is taken from: its first official view, else its video."""
    views = data.get("views")
    if isinstance(views, list) and views:
        first = data.get("first_views")
        k = first[0] if isinstance(first, list) and first and isinstance(first[0], int) else 0
        k = k if 0 <= k < len(views) else 0
        return str(views[k])
    video = data.get("video")
    return video if isinstance(video, str) and video else None


def flag(data: Mapping[str, JsonValue]) -> Flag | None:
    """The item's flag (see the module doc), or None."""
    raw = data.get("flag")
    if isinstance(raw, str) and raw.strip():
        return Flag(raw.strip())
    if isinstance(raw, dict) and (raw.get("reason") or raw.get("suggested") is not None):
        return Flag(str(raw.get("reason") or ""), raw.get("suggested"), str(raw.get("by") or ""))
    return None


def describe(kind: str, data: Mapping[str, JsonValue]) -> Described:
    parts = [p for p in (_subject_name(data), data.get("Category")) if isinstance(p, str) and p]
    if not parts and data.get("id") is not None:
        parts = [f"{'instance' if kind == 'rule' else 'item'} {data['id']}"]
    question = data.get("Question")
    return Described(
        " · ".join(parts) or kind,
        question.strip() if isinstance(question, str) else "",
        thumbnail(data),
        flag(data),
    )


def delete(conn: sqlite3.Connection, key: str, author: str) -> None:
    """Withdraw an item: it leaves every queue and export; its work stays in the database."""
    with db.transaction(conn):
        if not conn.execute("UPDATE items SET deleted = 1 WHERE id = ?", (key,)).rowcount:
            raise DataError(f"no item {key!r}")
        db.log_event(conn, author, "item.delete", key)


@dataclass
class Exported:
    """What an export wrote: the file, how many records, and what was left out and why."""

    path: Path
    written: int = 0
    left_out: list[str] = field(default_factory=list)  # "id: why"
    then: str = ""  # what to do with the file, when the benchmark needs a step to read it
