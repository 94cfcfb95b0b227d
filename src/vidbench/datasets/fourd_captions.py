"""4D-Bench's caption references, human_annotations.csv (`folder_name`, `caption_1`..`caption_5`),
read row by row: a bad row (not UTF-8, no uid, a duplicate uid, an empty caption) becomes an
`Issue` naming the file, the row and what is wrong, and every other row is kept. The one reader
of that file, for the `4dbench-caption` task and for `vidbench score-captions`.
"""

from __future__ import annotations

import csv
import io
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


def bad_byte(text: str) -> str | None:
    """The first undecodable byte of a surrogateescape-decoded text, as "0x..", or None."""
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            return f"0x{ord(ch) - 0xDC00:02x}"
    return None


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
        bad = [(c, b) for c in REF_COLUMNS if (b := bad_byte(row.get(c) or ""))]
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
