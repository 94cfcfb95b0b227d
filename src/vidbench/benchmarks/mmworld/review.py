"""MMWorld in the review app: its questions to answer, for the human baseline and the three
difficulty raters, and human_raters.json (question id -> the first three raters' correctness)
made from their answers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from vidbench.annotate import db
from vidbench.annotate.adapters import Exporter, Importer, ReviewAdapter
from vidbench.annotate.exports import not_assigned, submitted_answer, work_and_unassigned
from vidbench.annotate.items import Exported, Imported, add_item
from vidbench.annotate.project import Project
from vidbench.core.files import write_json

RATERS_FILE = "human_raters.json"


def import_mmworld(conn: sqlite3.Connection, data: Path, source: Path, author: str) -> Imported:
    """MMWorld questions for the human baseline and the three difficulty raters (`source`: the
    data folder, the root its video paths are relative to)."""
    from vidbench.benchmarks.mmworld import loader as mmworld

    data, out = source, Imported()
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
            add_item(conn, "answer", f"mmworld/{sample.id}", record, "mmworld", out)
        db.log_event(conn, author, "import.mmworld", f"{data}: {out.added} added")
    return out


def export_raters(conn: sqlite3.Connection, path: Path, author: str) -> Exported:
    out = Exported(path)
    given, left = work_and_unassigned(conn, "answer", "answer")
    out.left_out += not_assigned([u for u in left if u["data"].get("benchmark") == "mmworld"])
    raters = {}
    for key, works in given.items():
        item = json.loads(works[0]["data"])
        if item["benchmark"] != "mmworld":
            continue
        answered = [w for w in works if submitted_answer(w)]
        if len(answered) < 3:
            out.left_out.append(f"{key}: {len(answered)} of 3 raters submitted an answer")
            continue
        raters[item["id"]] = [w["content"] == f"({item['gold'].upper()})" for w in answered[:3]]
    write_json(path, raters, indent=1)
    out.written = len(raters)
    with db.transaction(conn):
        db.log_event(conn, author, "export.raters", f"{path}: {len(raters)} questions")
    return out


def _finds(data: Path) -> list[Path]:
    from vidbench.benchmarks.mmworld.loader import ANNOTATION_FILE

    return [data] if (data / ANNOTATION_FILE).is_file() else []


def _raters(project: Project, conn: sqlite3.Connection, out: Path, author: str) -> Exported:
    return export_raters(conn, out / RATERS_FILE, author)


REVIEW = ReviewAdapter(
    benchmark="mmworld",
    importers=(Importer("mmworld", import_mmworld, _finds),),
    exporters=(Exporter("raters", _raters),),
)
