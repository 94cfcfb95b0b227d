"""Work items imported into a project: QA candidates to review (issue 14's review_queue.jsonl or
an existing 4d_qa.json), 4D objects to caption, questions to answer for a human baseline
(4D-Bench, MMWorld) and AutoEval-Video rules to red-team.

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
from vidbench.annotate.paths import is_name
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines
from vidbench.core.records import Sample

QUEUE_FILE = "review_queue.jsonl"
Checked = TypeVar("Checked")
KINDS = ("qa", "caption", "answer", "rule")


@dataclass
class Imported:
    added: int = 0
    skipped: list[str] = field(default_factory=list)  # already in the project
    problems: list[str] = field(default_factory=list)  # malformed records, named

    def merge(self, other: Imported) -> None:
        self.added += other.added
        self.skipped += other.skipped
        self.problems += other.problems


def item_id(kind: str, ref: str) -> str:
    return f"{kind}:{ref}"


def views(data: Path, data_dir: Path, uid: str) -> list[str]:
    """The 24 view videos of an object, relative to the project's data folder."""
    return [
        str(fourd.view_path(data_dir, uid, k).relative_to(data))
        for k in range(fourd.VIEWS_PER_OBJECT)
    ]


def add(
    conn: sqlite3.Connection, kind: str, ref: str, data: dict[str, Any], source: str, out: Imported
) -> None:
    key = item_id(kind, ref)
    if conn.execute("SELECT 1 FROM items WHERE id = ?", (key,)).fetchone():
        out.skipped.append(key)
        return
    conn.execute(
        "INSERT INTO items (id, kind, ref, data, source, created) VALUES (?, ?, ?, ?, ?, ?)",
        (key, kind, ref, json.dumps(data, ensure_ascii=False), source, db.now()),
    )
    out.added += 1


def check_candidate(record: Any) -> dict[str, Any]:
    """A review-queue candidate in the official record shape; DataError says what is wrong."""
    if not isinstance(record, dict):
        raise DataError("not a JSON object")
    key, uid = record.get("id"), record.get("uid")
    if not isinstance(uid, str) or not is_name(uid):
        raise DataError(f"'uid' must be an object's folder name, got {uid!r}")
    if not isinstance(key, str) or not key.startswith(uid + "_"):
        raise DataError(f"'id' must be '<uid>_<suffix>' with 'uid' {uid!r}, got {key!r}")
    subtask = record.get("Category")
    if not isinstance(subtask, str) or fourd.canonical_subtask(subtask) is None:
        raise DataError(f"unknown Category {subtask!r}")
    question, options = record.get("Question"), record.get("Options")
    if not isinstance(question, str) or not question.strip():
        raise DataError("'Question' must be a non-empty string")
    if not (isinstance(options, list) and len(options) == 4):
        raise DataError("'Options' must be a list of four strings")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise DataError("'Options' must be a list of four strings")
    index = record.get("Answer index")
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= 4:
        raise DataError(f"'Answer index' must be an integer 1..4, got {index!r}")
    provenance = record.get("provenance", {})
    return {
        "id": key,
        "uid": uid,
        "Category": fourd.canonical_subtask(subtask),
        "Question": question,
        "Options": options,
        "Answer index": index,
        "provenance": provenance,
    }


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


def import_queue(conn: sqlite3.Connection, data: Path, path: Path, author: str) -> Imported:
    """Issue 14's review_queue.jsonl, one candidate per line."""
    out = Imported()
    data_dir = fourd.resolve_data_dir(data, fourd.QA_FILE) if has_qa(data) else data
    with db.transaction(conn):
        for number, record in checked_lines(path, check_candidate, out):
            record["views"] = views(data, data_dir, record["uid"])
            add(conn, "qa", record["id"], record, f"{path.name}:{number}", out)
        db.log_event(conn, author, "import.queue", f"{path}: {out.added} added")
    return out


def has_qa(data: Path) -> bool:
    try:
        fourd.resolve_data_dir(data, fourd.QA_FILE)
    except DataError:
        return False
    return True


def _qa_record(sample: Sample) -> dict[str, Any]:
    return {
        "id": sample.id,
        "uid": sample.metadata["uid"],
        "Category": sample.metadata["subtask"],
        "Question": sample.question,
        # the loader strips the "(A) " labels; the official records (and the export) carry them
        "Options": [
            f"({letter}) {text}" for letter, text in zip("ABCD", sample.options, strict=True)
        ],
        "Answer index": "ABCD".index(sample.answer or "A") + 1,
        "provenance": {"source": fourd.QA_FILE},
    }


def import_fourd(conn: sqlite3.Connection, data: Path, author: str) -> Imported:
    """From a 4D-Bench folder: every QA record to review and to answer (human baseline), and
    every object with videos to caption."""
    out = Imported()
    with db.transaction(conn):
        if has_qa(data):
            data_dir = fourd.resolve_data_dir(data, fourd.QA_FILE)
            loaded = fourd.load_qa(data)
            out.problems += [str(p) for p in loaded.problems]
            for sample in loaded.items:
                record = _qa_record(sample)
                record["views"] = views(data, data_dir, record["uid"])
                add(conn, "qa", sample.id, record, fourd.QA_FILE, out)
                question = {**record, "benchmark": "4dbench", "gold": sample.answer}
                add(conn, "answer", f"4dbench/{sample.id}", question, fourd.QA_FILE, out)
        for data_dir in {_video_root(data, name) for name in fourd.RELEASE_FOLDERS}:
            video_dir = data_dir / fourd.VIDEO_DIR
            if not video_dir.is_dir():
                continue
            for folder in sorted(p for p in video_dir.iterdir() if p.is_dir()):
                record = {"uid": folder.name, "views": views(data, data_dir, folder.name)}
                add(conn, "caption", folder.name, record, fourd.VIDEO_DIR, out)
        db.log_event(conn, author, "import.4dbench", f"{data}: {out.added} added")
    return out


def _video_root(data: Path, annotation_file: str) -> Path:
    release = data / fourd.RELEASE_FOLDERS[annotation_file]
    return release if (release / fourd.VIDEO_DIR).is_dir() else data


def import_mmworld(conn: sqlite3.Connection, data: Path, author: str) -> Imported:
    """MMWorld questions for the human baseline and the three difficulty raters."""
    from vidbench.benchmarks.mmworld import loader as mmworld

    out = Imported()
    loaded = mmworld.load(data, subset=None)
    out.problems += [str(p) for p in loaded.problems]
    with db.transaction(conn):
        for sample in loaded.items:
            video = sample.media.videos[0]
            record = {
                "benchmark": "mmworld",
                "id": sample.id,
                "Question": sample.question,
                "Options": list(sample.options),
                "gold": sample.answer,
                "video": str(Path(video).resolve().relative_to(data.resolve())),
            }
            add(conn, "answer", f"mmworld/{sample.id}", record, "mmworld", out)
        db.log_event(conn, author, "import.mmworld", f"{data}: {out.added} added")
    return out


def import_rules(conn: sqlite3.Connection, rules_file: Path, author: str) -> Imported:
    """AutoEval-Video instances whose rules the red team attacks."""
    from vidbench.benchmarks.autoeval_video import loader as autoeval

    out = Imported()
    loaded = autoeval.load(rules_file)
    out.problems += [str(p) for p in loaded.problems]
    with db.transaction(conn):
        for sample in loaded.items:
            record = {"id": sample.id, "Question": sample.question, "Rule": sample.rules}
            add(conn, "rule", sample.id, record, str(rules_file), out)
        db.log_event(conn, author, "import.rules", f"{rules_file}: {out.added} added")
    return out


def delete(conn: sqlite3.Connection, key: str, author: str) -> None:
    """Withdraw an item: it leaves every queue and export; its work stays in the database."""
    with db.transaction(conn):
        if not conn.execute("UPDATE items SET deleted = 1 WHERE id = ?", (key,)).rowcount:
            raise DataError(f"no item {key!r}")
        db.log_event(conn, author, "item.delete", key)
