"""Reading captions made elsewhere and their references, record by record.

Predictions: JSON Lines `{"uid": ..., "caption": ...}`. References: 4D-Bench's
human_annotations.csv (`folder_name`, `caption_1`..`caption_5`), read by references.py. A bad
record (not UTF-8 or half a character, not JSON, no uid, an empty caption, a duplicate, a uid
without usable references) becomes an `Issue` naming the file, the record and what is wrong;
every other record is kept.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from vidbench.benchmarks.fourd.references import Issue, Read, read_references
from vidbench.core.errors import DataError
from vidbench.core.files import not_text

__all__ = ["Issue", "Read", "read_predictions", "read_references"]


def read_predictions(path: Path) -> Read[str]:
    """uid -> caption (str), and an Issue for every line that cannot be scored."""
    path = Path(path)
    try:
        raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)  # a file saved by Notepad, Excel
    except OSError as e:
        raise DataError(f"{path}: cannot read predictions ({e})") from e
    out: Read[str] = Read()
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
        elif bad := not_text(uid) or not_text(caption):
            record = where if not_text(uid) else f"{uid} ({where})"
            out.add_issue("not_utf8", record, path, f"{bad} in the record; skipped")
        else:
            if uid.strip() in out.items:  # as a dict of the lines would: the last is used
                out.add_issue(
                    "duplicate", f"{uid} ({where})", path, "duplicate uid; this last one is used"
                )
            out.items[uid.strip()] = caption
    return out
