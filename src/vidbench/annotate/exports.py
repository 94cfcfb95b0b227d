"""The official files made from people's work, and the double-review agreement.

Nothing leaves silently: every export lists under `left_out` what it did not write and why,
live items that were never assigned to anyone included.

- 4d_qa.json: the accepted QA (every assigned review submitted, none rejecting; an edit replaces
  the record) in a folder that is a valid 4D-Bench data folder (videos linked beside it).
- human_annotations.csv: objects with five submitted or accepted captions, in writer order (a
  caption that repeats a machine draft word for word is not a person's and does not count).
- JSON Lines {"id", "answer"} of one annotator's human-baseline answers (the predictions backend).
- human_raters.json: MMWorld question id -> the first three raters' correctness.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from vidbench.annotate import db
from vidbench.annotate.drafts import draft_source
from vidbench.annotate.exported import Exported
from vidbench.annotate.items import has_qa
from vidbench.annotate.links import EXPORT_RECORD, export_record
from vidbench.annotate.paths import child, file_name
from vidbench.annotate.project import Project
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.references import N_REFS, REF_COLUMNS
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import write_json, write_jsonl, write_text
from vidbench.scoring.agreement import cohen_kappa

DONE = ("submitted", "accepted")


def _live(conn: sqlite3.Connection, kind: str, job: str) -> dict[str, list[dict[str, Any]]]:
    """item id -> its work rows (slot order), for live items of a kind."""
    rows = conn.execute(
        "SELECT w.*, i.data, i.ref, u.name AS owner FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE i.kind = ? AND w.job = ? AND i.deleted = 0 "
        "ORDER BY w.item_id, w.slot",
        (kind, job),
    )
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["item_id"]].append(dict(r))
    return out


def _unassigned(conn: sqlite3.Connection, kind: str, job: str) -> list[dict[str, Any]]:
    """Live items of a kind that nobody was given for `job` (id and data): in no export yet."""
    rows = conn.execute(
        "SELECT i.id, i.data FROM items i WHERE i.kind = ? AND i.deleted = 0 AND NOT EXISTS "
        "(SELECT 1 FROM work w WHERE w.item_id = i.id AND w.job = ?) ORDER BY i.id",
        (kind, job),
    )
    return [{"id": r["id"], "data": json.loads(r["data"])} for r in rows]


def _not_assigned(items: list[dict[str, Any]]) -> list[str]:
    return [f"{item['id']}: not assigned to anyone" for item in items]


def _review(work: dict[str, Any]) -> dict[str, Any]:
    return json.loads(work["content"]) if work["content"] else {}


def accepted_qa(conn: sqlite3.Connection) -> tuple[dict[str, dict[str, Any]], list[str]]:
    records, left_out = {}, []
    for key, works in _live(conn, "qa", "review").items():
        item = json.loads(works[0]["data"])
        reviews = [_review(w) for w in works]
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
            edits = [r["edited"] for r in reviews if r["decision"] == "edit"]
            record = edits[-1] if edits else item
            records[item["id"]] = {
                "Question": record["Question"],
                "Options": record["Options"],
                "Answer index": record["Answer index"],
                "Category": record["Category"],
            }
    return records, left_out + _not_assigned(_unassigned(conn, "qa", "review"))


def export_qa(conn: sqlite3.Connection, data: Path, out_dir: Path, author: str) -> Exported:
    """OUT/4d_qa.json and OUT/4d_object_multi_view_videos linking the project's videos."""
    records, left_out = accepted_qa(conn)
    out_dir.mkdir(parents=True, exist_ok=True)
    source = fourd.resolve_data_dir(data, fourd.QA_FILE) if has_qa(data) else data
    videos, link = source / fourd.VIDEO_DIR, out_dir / fourd.VIDEO_DIR
    if not link.exists() and videos.resolve() != link.resolve():
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
    out.left_out += _not_assigned(_unassigned(conn, "caption", "write"))
    rows = []
    for key, works in _live(conn, "caption", "write").items():
        item = json.loads(works[0]["data"])
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
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def export_answers(
    conn: sqlite3.Connection, user: str, benchmark: str, path: Path, author: str
) -> Exported:
    out = Exported(path)
    found = conn.execute("SELECT id FROM users WHERE name = ?", (user,)).fetchone()
    if found is None:
        raise ConfigError(f"no user {user!r}")
    lines = []
    for works in _live(conn, "answer", "answer").values():
        for w in works:
            item = json.loads(w["data"])
            if w["user_id"] != found["id"] or item["benchmark"] != benchmark:
                continue
            if w["content"]:
                lines.append({"id": item["id"], "answer": w["content"]})
            else:
                out.left_out.append(f"{item['id']}: not answered")
    for unassigned in _unassigned(conn, "answer", "answer"):
        if unassigned["data"].get("benchmark") == benchmark:
            out.left_out.append(f"{unassigned['data']['id']}: not assigned to anyone")
    write_jsonl(path, lines)
    out.written = len(lines)
    with db.transaction(conn):
        db.log_event(conn, author, "export.answers", f"{path}: {user} {benchmark} {len(lines)}")
    return out


def export_raters(conn: sqlite3.Connection, path: Path, author: str) -> Exported:
    out = Exported(path)
    unassigned = _unassigned(conn, "answer", "answer")
    out.left_out += _not_assigned(
        [u for u in unassigned if u["data"].get("benchmark") == "mmworld"]
    )
    raters = {}
    for key, works in _live(conn, "answer", "answer").items():
        item = json.loads(works[0]["data"])
        if item["benchmark"] != "mmworld":
            continue
        answered = [w for w in works if w["content"]]
        if len(answered) < 3:
            out.left_out.append(f"{key}: {len(answered)} of 3 raters answered")
            continue
        raters[item["id"]] = [w["content"] == f"({item['gold'].upper()})" for w in answered[:3]]
    write_json(path, raters, indent=1)
    out.written = len(raters)
    with db.transaction(conn):
        db.log_event(conn, author, "export.raters", f"{path}: {len(raters)} questions")
    return out


def review_agreement(conn: sqlite3.Connection) -> dict[str, Any]:
    """Double review: items with two submitted reviews, agreement on keep (accept or edit)
    vs reject, with Cohen's kappa (scoring/agreement.py)."""
    pairs = []
    for works in _live(conn, "qa", "review").values():
        done = [_review(w) for w in works if w["status"] == "submitted"]
        if len(done) >= 2:
            pairs.append(tuple(int(r["decision"] != "reject") for r in done[:2]))
    agree = sum(1 for a, b in pairs if a == b)
    kappa = cohen_kappa(pairs)
    return {
        "n": len(pairs),
        "agreement": round(100 * agree / len(pairs), 2) if pairs else None,
        "kappa": None if kappa is None else round(kappa, 4),
    }


def export_kind(
    project: Project,
    conn: sqlite3.Connection,
    kind: str,
    author: str,
    user: str | None,
    benchmark: str,
) -> Exported:
    """One export into PROJECT/exports/ (shared by the admin page and the CLI)."""
    out = project.path / "exports"
    if kind == "qa":
        return export_qa(conn, project.data, out / "4dbench-qa", author)
    if kind == "captions":
        return export_captions(conn, out / "human_annotations.csv", author)
    if kind == "raters":
        return export_raters(conn, out / "human_raters.json", author)
    if kind == "rules":
        from vidbench.annotate.redteam_store import export

        return export(project, out / "AUTO-EVAL-VIDEO.json", author, conn)
    if not user:
        raise DataError("answers export: name the user")
    # a name is never a path: `x/../../elsewhere` gives one file inside OUT (paths.py)
    path = child(out, file_name(f"{benchmark}-{user}", ".jsonl"))
    return export_answers(conn, user, benchmark, path, author)
