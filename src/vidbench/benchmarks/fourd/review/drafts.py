"""Machine-drafted captions (`vidbench curate 4d captions` writes caption_drafts.jsonl) offered to
caption writers as a starting point, always marked as a model's text (annotate/work.py,
draft_source).

A draft is attached to the object's caption item (the item is created if the object was not
imported yet); the writer sees it beside an empty box and may start from it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from vidbench.annotate import db
from vidbench.annotate.items import Imported, add_item, checked_lines, item_id
from vidbench.annotate.paths import is_name
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.review.items import object_record
from vidbench.core.errors import DataError

DRAFTS_FILE = "caption_drafts.jsonl"
MAX_DRAFT = 5000


def check_draft(record: object) -> dict[str, str]:
    """{uid, caption, model} of one line; DataError says what is wrong."""
    if not isinstance(record, dict):
        raise DataError("not a JSON object")
    if record.get("machine_draft") is not True:
        raise DataError("'machine_draft' must be true (only model drafts are imported here)")
    uid, caption, model = record.get("uid"), record.get("caption"), record.get("model")
    if not isinstance(uid, str) or not is_name(uid):
        raise DataError(f"'uid' must be an object's folder name, got {uid!r}")
    if not isinstance(caption, str) or not caption.strip() or len(caption) > MAX_DRAFT:
        raise DataError(f"'caption' must be a non-empty string of at most {MAX_DRAFT} characters")
    if not isinstance(model, str) or not model.strip():
        raise DataError("'model' must name the model that wrote the draft")
    return {"uid": uid, "caption": caption.strip(), "model": model}


def import_drafts(conn: sqlite3.Connection, data: Path, path: Path, author: str) -> Imported:
    """Attach each line's draft to its object's caption item; a draft already there is skipped."""
    out = Imported()
    with db.transaction(conn):
        for number, draft in checked_lines(path, check_draft, out):
            _attach(conn, data, draft, f"{path.name}:{number}", out)
        db.log_event(conn, author, "import.drafts", f"{path}: {out.added} added")
    return out


def _attach(
    conn: sqlite3.Connection,
    data: Path,
    draft: dict[str, str],
    source: str,
    out: Imported,
) -> None:
    key = item_id("caption", draft["uid"])
    shown = {"model": draft["model"], "caption": draft["caption"]}
    found = conn.execute("SELECT data FROM items WHERE id = ?", (key,)).fetchone()
    if found is None:
        uid = draft["uid"]
        record = {"uid": uid, **object_record(data, _object_root(data, uid), uid)}
        add_item(conn, "caption", draft["uid"], {**record, "drafts": [shown]}, source, out)
        return
    record = json.loads(found["data"])
    if shown in record.get("drafts", []):
        out.skipped.append(f"{key} (draft by {draft['model']})")
        return
    record["drafts"] = [*record.get("drafts", []), shown]
    conn.execute("UPDATE items SET data = ? WHERE id = ?", (json.dumps(record), key))
    out.added += 1


def _object_root(data: Path, uid: str) -> Path:
    """The folder whose video folder holds this object (a release's captioning or QA part, or
    the data folder itself); the data folder when none does (the page names the missing views)."""
    for root in (data / folder for folder in fourd.RELEASE_FOLDERS.values()):
        if (root / fourd.VIDEO_DIR / uid).is_dir():
            return root
    return data
