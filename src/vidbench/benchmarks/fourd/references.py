"""4D-Bench's caption references, human_annotations.csv (`folder_name`, `caption_1`..`caption_5`),
read record by record: a bad row (malformed CSV such as a quote left open, not UTF-8, not a uid,
a duplicate uid, an empty caption) becomes an `Issue` naming the file, the line and what is
wrong, and every other row is kept. The one reader
of that file, for the `4dbench-caption` task and for `vidbench score-captions`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from vidbench.core.errors import DataError
from vidbench.core.files import not_text
from vidbench.tasks.csv_records import read_csv_records
from vidbench.tasks.problems import Problem

N_REFS = 5
REF_COLUMNS = ("folder_name", *(f"caption_{i}" for i in range(1, N_REFS + 1)))
UID = re.compile(r"[0-9a-f]{32}")  # a 4D-Bench object's uid (Objaverse's)


@dataclass(frozen=True)
class Issue:
    kind: str  # not_utf8 | malformed | empty_caption | duplicate | missing_references | unknown_uid
    problem: Problem

    def __str__(self) -> str:
        return str(self.problem)


Item = TypeVar("Item")  # what a file holds per object: its references, or a caption


@dataclass
class Read(Generic[Item]):
    items: dict[str, Item] = field(default_factory=dict)  # uid -> caption, or -> references
    issues: list[Issue] = field(default_factory=list)

    def add_issue(self, kind: str, record: str, path: Path, message: str) -> None:
        self.issues.append(Issue(kind, Problem(record, path, message)))

    def counts(self) -> dict[str, int]:
        return dict(Counter(i.kind for i in self.issues))


def read_references(path: Path) -> Read[tuple[str, ...]]:
    """uid -> tuple of the five references; an Issue for every unusable row. A folder_name that
    appears twice keeps its last row, as the official evaluation's dict does."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    except OSError as e:
        raise DataError(f"{path}: cannot read references ({e})") from e
    records, malformed = read_csv_records(text, path, REF_COLUMNS)
    out: Read[tuple[str, ...]] = Read()
    for problem in malformed:
        out.issues.append(Issue("malformed", problem))
    lines: dict[str, list[int]] = {}
    for record in records:
        row, line = record.fields, record.line
        uid = (row.get("folder_name") or "").strip()
        where = uid or f"line {line}"
        bad = [(c, b) for c in REF_COLUMNS if (b := not_text(row.get(c) or ""))]
        refs = tuple((row.get(c) or "").strip() for c in REF_COLUMNS[1:])
        if bad:
            column, byte = bad[0]
            out.add_issue(
                "not_utf8",
                where,
                path,
                f"line {line}: {column} is not UTF-8 ({byte}); object skipped",
            )
        elif not UID.fullmatch(uid):
            out.add_issue(
                "malformed",
                where,
                path,
                f"line {line}: folder_name {uid!r} is not a uid "
                "(32 lowercase hex characters); row skipped",
            )
        elif not all(refs):
            empty = [c for c, r in zip(REF_COLUMNS[1:], refs, strict=True) if not r]
            out.add_issue(
                "missing_references",
                where,
                path,
                f"line {line}: {', '.join(empty)} empty; object skipped",
            )
        else:
            lines.setdefault(uid, []).append(line)
            out.items.pop(uid, None)  # the last row of a uid is the one used
            out.items[uid] = refs
    for uid, seen in lines.items():
        if len(seen) > 1:
            out.add_issue(
                "duplicate",
                uid,
                path,
                f"duplicate folder_name on lines {', '.join(map(str, seen))}; the "
                f"last (line {seen[-1]}) is used, as the official evaluation's dict does",
            )
    return out
