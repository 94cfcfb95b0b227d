"""`annotate init` and `annotate import PROJECT folder`: every kind of item a dataset folder
holds, each through its own importer (items.py, drafts.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.annotate.drafts import DRAFTS_FILE, import_drafts
from vidbench.annotate.items import (
    QUEUE_FILE,
    Imported,
    import_fourd,
    import_mmworld,
    import_queue,
    import_rules,
)
from vidbench.benchmarks.autoeval_video.loader import RULES_FILE
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.mmworld.loader import ANNOTATION_FILE


def import_folder(conn: sqlite3.Connection, data: Path, author: str) -> Imported:
    """Everything `annotate init` finds in a dataset folder."""
    out = Imported()
    # the queue first: `curate 4d qa` writes it beside its 4d_qa.json, and its records carry the
    # provenance (generator, validator, blind answers) that the same ids in 4d_qa.json lack
    for queue in (data / QUEUE_FILE, data / fourd.RELEASE_FOLDERS[fourd.QA_FILE] / QUEUE_FILE):
        if queue.is_file():
            out.merge(import_queue(conn, data, queue, author))
    out.merge(import_fourd(conn, data, author))
    if (data / ANNOTATION_FILE).is_file():
        out.merge(import_mmworld(conn, data, author))
    if (data / RULES_FILE).is_file():
        out.merge(import_rules(conn, data / RULES_FILE, author))
    if (data / DRAFTS_FILE).is_file():
        out.merge(import_drafts(conn, data, data / DRAFTS_FILE, author))
    return out
