"""4D-Bench files made from people's work in the review app.

- 4d_qa.json: the accepted QA (every assigned review submitted, none rejecting; an edit replaces
  the record) in a folder that is a valid 4D-Bench data folder (videos linked beside it, the
  link recorded in export.json so a review project on it can serve them: links.py).
- human_annotations.csv: objects with five submitted or accepted captions, in writer order (a
  caption that repeats a machine draft word for word is not a person's and does not count).

Nothing leaves silently: what is not written is listed under `left_out`, with why.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from pathlib import Path

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.annotate.exports import DONE, not_assigned, review_of, work_and_unassigned
from vidbench.annotate.items import Exported
from vidbench.annotate.project import Project
from vidbench.annotate.work import draft_source
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.references import N_REFS, REF_COLUMNS
from vidbench.benchmarks.fourd.review.items import has_qa
from vidbench.benchmarks.fourd.review.links import EXPORT_RECORD, export_record
from vidbench.core.files import json_object, write_json, write_text

QA_FOLDER = "4dbench-qa"
CAPTIONS_FILE = "human_annotations.csv"


def accepted_qa(conn: sqlite3.Connection) -> tuple[dict[str, dict[str, JsonValue]], list[str]]:
    records: dict[str, dict[str, JsonValue]] = {}
    left_out: list[str] = []
    given, left = work_and_unassigned(conn, "qa", "review")
    for key, works in given.items():
        item = json_object(json.loads(works[0]["data"]), key)
        reviews = [review_of(w) for w in works]
        pending = [
            w["owner"]
            for w, r in zip(works, reviews, strict=True)
            if w["status"] != "submitted" or r.get("decision") not in ("accept", "edit", "reject")
        ]
        if pending:
            left_out.append(f"{key}: review pending ({', '.join(pending)})")
        elif any(r["decision"] == "reject" for r in reviews):
            left_out.append(f"{key}: rejected")
        else:
            edits = [r.get("edited") for r in reviews if r["decision"] == "edit"]
            record = json_object(edits[-1], f"{key}: the edited record") if edits else item
            fields = ("Question", "Options", "Answer index", "Category")
            records[str(item["id"])] = {name: record.get(name) for name in fields}
    return records, left_out + not_assigned(left)


def export_qa(conn: sqlite3.Connection, data: Path, out_dir: Path, author: str) -> Exported:
    """OUT/4d_qa.json and OUT/4d_object_multi_view_videos linking the project's videos."""
    records, left_out = accepted_qa(conn)
    out_dir.mkdir(parents=True, exist_ok=True)
    source = fourd.resolve_data_dir(data, fourd.QA_FILE) if has_qa(data) else data
    videos, link = source / fourd.VIDEO_DIR, out_dir / fourd.VIDEO_DIR
    if link.is_symlink() and os.readlink(link) != str(videos.resolve()):
        link.unlink()  # an earlier export's, from before the data folder moved: linked anew
    if not link.exists() and not link.is_symlink() and videos.resolve() != link.resolve():
        os.symlink(videos.resolve(), link, target_is_directory=True)
    # the record that lets a review project on OUT serve the videos through the link (links.py)
    write_json(out_dir / EXPORT_RECORD, export_record(source), indent=1)
    path = out_dir / fourd.QA_FILE
    write_json(path, records, indent=1)
    with db.transaction(conn):
        db.log_event(conn, author, "export.qa", f"{path}: {len(records)} records")
    return Exported(path, len(records), left_out)


def export_captions(conn: sqlite3.Connection, path: Path, author: str) -> Exported:
    out = Exported(path)
    given, left = work_and_unassigned(conn, "caption", "write")
    out.left_out += not_assigned(left)
    rows = []
    for key, works in given.items():
        item = json_object(json.loads(works[0]["data"]), key)
        done = []
        for w in (w for w in works if w["status"] in DONE):
            if not w["content"].strip():  # saves refuse this; a database from before did not
                out.left_out.append(f"{key}: {w['owner']}'s caption is empty")
            # saves refuse an unedited draft; this catches drafts imported after the caption
            elif model := draft_source(item, w["content"]):
                out.left_out.append(f"{key}: {w['owner']}'s caption is {model}'s machine draft")
            else:
                done.append(w)
        if len(done) < N_REFS:
            out.left_out.append(f"{key}: {len(done)} of {N_REFS} captions done")
            continue
        rows.append([works[0]["ref"], *(w["content"].strip() for w in done[:N_REFS])])
    text = _csv([list(REF_COLUMNS), *rows])
    write_text(path, text)
    out.written = len(rows)
    with db.transaction(conn):
        db.log_event(conn, author, "export.captions", f"{path}: {len(rows)} objects")
    return out


def _csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def qa_exporter(project: Project, conn: sqlite3.Connection, out: Path, author: str) -> Exported:
    return export_qa(conn, project.data, out / QA_FOLDER, author)


def captions_exporter(
    project: Project, conn: sqlite3.Connection, out: Path, author: str
) -> Exported:
    return export_captions(conn, out / CAPTIONS_FILE, author)
