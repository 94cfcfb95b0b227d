"""4D-Bench items in the review app: QA candidates to review (the review_queue.jsonl `curate 4d
qa` writes, or an existing 4d_qa.json), the same questions to answer (the human baseline), and
the objects with videos to caption. Every item carries its object's 24 view videos (relative to
the project's data folder) and the official input views (`first_views`) the pages show first."""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from pathlib import Path

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.annotate.items import Imported, add_item, checked_lines
from vidbench.annotate.paths import is_name
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.variants import OFFICIAL_VIEWS
from vidbench.core.errors import DataError
from vidbench.core.files import Json
from vidbench.core.records import Sample

QUEUE_FILE = "review_queue.jsonl"


@lru_cache(maxsize=4096)
def views(data: Path, data_dir: Path, uid: str) -> tuple[str, ...]:
    """The 24 view videos of an object, relative to the project's data folder (paths alone,
    nothing read: kept for the next question on the object, since a QA set asks dozens about
    each and 24 paths a question made a 100,000-question import spend most of its time here)."""
    return tuple(
        str(fourd.view_path(data_dir, uid, k).relative_to(data))
        for k in range(fourd.VIEWS_PER_OBJECT)
    )


def object_record(data: Path, data_dir: Path, uid: str) -> dict[str, Json]:
    """What every 4D-Bench item carries about its object: its views, the official ones first."""
    return {"views": list(views(data, data_dir, uid)), "first_views": list(OFFICIAL_VIEWS)}


def check_candidate(record: object) -> dict[str, JsonValue]:
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


def import_queue(conn: sqlite3.Connection, data: Path, path: Path, author: str) -> Imported:
    """Issue 14's review_queue.jsonl, one candidate per line."""
    out = Imported()
    data_dir = fourd.resolve_data_dir(data, fourd.QA_FILE) if has_qa(data) else data
    with db.transaction(conn):
        for number, record in checked_lines(path, check_candidate, out):
            item = {**record, **object_record(data, data_dir, str(record["uid"]))}
            add_item(conn, "qa", str(record["id"]), item, f"{path.name}:{number}", out)
        db.log_event(conn, author, "import.queue", f"{path}: {out.added} added")
    return out


def has_qa(data: Path) -> bool:
    try:
        fourd.resolve_data_dir(data, fourd.QA_FILE)
    except DataError:
        return False
    return True


def _qa_record(sample: Sample) -> dict[str, Json]:
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


def import_release(conn: sqlite3.Connection, data: Path, source: Path, author: str) -> Imported:
    """From a 4D-Bench folder: every QA record to review and to answer (human baseline), and
    every object with videos to caption. The folder read (`source`) is the root its items'
    video paths are relative to, as the project's data folder is for `annotate init`."""
    data, out = source, Imported()
    with db.transaction(conn):
        if has_qa(data):
            data_dir = fourd.resolve_data_dir(data, fourd.QA_FILE)
            loaded = fourd.load_qa(data)
            out.problems += [str(p) for p in loaded.problems]
            for sample in loaded.items:
                uid = str(sample.metadata["uid"])
                record = _qa_record(sample) | object_record(data, data_dir, uid)
                add_item(conn, "qa", sample.id, record, fourd.QA_FILE, out)
                question = {**record, "benchmark": "4dbench", "gold": sample.answer}
                add_item(conn, "answer", f"4dbench/{sample.id}", question, fourd.QA_FILE, out)
        for data_dir in {_video_root(data, name) for name in fourd.RELEASE_FOLDERS}:
            video_dir = data_dir / fourd.VIDEO_DIR
            if not video_dir.is_dir():
                continue
            for folder in sorted(p for p in video_dir.iterdir() if p.is_dir()):
                record = {"uid": folder.name, **object_record(data, data_dir, folder.name)}
                add_item(conn, "caption", folder.name, record, fourd.VIDEO_DIR, out)
        db.log_event(conn, author, "import.4dbench", f"{data}: {out.added} added")
    return out


def _video_root(data: Path, annotation_file: str) -> Path:
    release = data / fourd.RELEASE_FOLDERS[annotation_file]
    return release if (release / fourd.VIDEO_DIR).is_dir() else data
