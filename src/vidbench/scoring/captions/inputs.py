"""Reading captions made elsewhere and their references, record by record.

Predictions: JSON Lines `{"uid": ..., "caption": ...}`. References: 4D-Bench's
human_annotations.csv (`folder_name`, `caption_1`..`caption_5`). A bad record (not UTF-8,
not JSON, no uid, an empty caption, a duplicate, a uid without usable references) becomes an
`Issue` naming the file, the record and what is wrong; every other record is kept.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vidbench.core.errors import DataError
from vidbench.datasets.problems import Problem

N_REFS = 5
REF_COLUMNS = ("folder_name", *(f"caption_{i}" for i in range(1, N_REFS + 1)))


@dataclass(frozen=True)
class Issue:
    kind: str  # not_utf8 | malformed | empty_caption | duplicate | missing_references | unknown_uid
    problem: Problem

    def __str__(self) -> str:
        return str(self.problem)


@dataclass
class Read:
    items: dict[str, Any] = field(default_factory=dict)  # uid -> caption, or -> references
    issues: list[Issue] = field(default_factory=list)

    def add_issue(self, kind: str, record: str, path: Path, message: str) -> None:
        self.issues.append(Issue(kind, Problem(record, path, message)))

    def counts(self) -> dict[str, int]:
        return dict(Counter(i.kind for i in self.issues))


def _bad_bytes(text: str) -> str | None:
    """The first undecodable byte of a surrogateescape-decoded text, as "0x..", or None."""
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            return f"0x{ord(ch) - 0xDC00:02x}"
    return None


def read_predictions(path: Path) -> Read:
    """uid -> caption (str), and an Issue for every line that cannot be scored."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"{path}: cannot read predictions ({e})") from e
    out = Read()
    for number, line in enumerate(raw.split(b"\n"), start=1):
        where = f"line {number}"
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            out.add_issue(
                "not_utf8",
                where,
                path,
                f"not UTF-8 (byte {line[e.start]:#04x} at column {e.start + 1}); line skipped",
            )
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            out.add_issue("malformed", where, path, f"not JSON ({e.msg}); line skipped")
            continue
        uid = record.get("uid") if isinstance(record, dict) else None
        caption = record.get("caption") if isinstance(record, dict) else None
        if not isinstance(uid, str) or not uid.strip():
            out.add_issue("malformed", where, path, 'expected {"uid": str, "caption": str}')
        elif not isinstance(caption, str):
            out.add_issue("malformed", f"{uid} ({where})", path, "caption is not a string")
        elif not caption.strip():
            out.add_issue("empty_caption", f"{uid} ({where})", path, "empty caption; not scored")
        elif uid.strip() in out.items:
            out.add_issue("duplicate", f"{uid} ({where})", path, "duplicate uid; first kept")
        else:
            out.items[uid.strip()] = caption
    return out


def read_references(path: Path) -> Read:
    """uid -> tuple of the five references; an Issue for every unusable row."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    except OSError as e:
        raise DataError(f"{path}: cannot read references ({e})") from e
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in REF_COLUMNS if c not in (reader.fieldnames or [])]
        rows = list(reader)
    except csv.Error as e:
        raise DataError(f"{path}: malformed CSV ({e})") from e
    if missing:
        raise DataError(f"{path}: missing columns {missing} (expected {', '.join(REF_COLUMNS)})")
    out = Read()
    for line, row in enumerate(rows, start=2):
        uid = (row.get("folder_name") or "").strip()
        record = uid or f"line {line}"
        bad = [(c, b) for c in REF_COLUMNS if (b := _bad_bytes(row.get(c) or ""))]
        refs = tuple((row.get(c) or "").strip() for c in REF_COLUMNS[1:])
        if bad:
            column, byte = bad[0]
            out.add_issue(
                "not_utf8", record, path, f"{column} is not UTF-8 (byte {byte}); object skipped"
            )
        elif not uid:
            out.add_issue("malformed", record, path, "empty folder_name; row skipped")
        elif uid in out.items:
            out.add_issue("duplicate", record, path, "duplicate folder_name; first kept")
        elif not all(refs):
            empty = [c for c, r in zip(REF_COLUMNS[1:], refs, strict=True) if not r]
            out.add_issue(
                "missing_references", record, path, f"{', '.join(empty)} empty; object skipped"
            )
        else:
            out.items[uid] = refs
    return out
