"""The toy questions in vidbench's review app: `vidbench annotate init` imports them as
questions for people to answer (a human baseline); `annotate export PROJECT answers --benchmark
toy` writes their answers back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from toybench.loader import QUESTIONS, load
from vidbench import Imported, Importer, ReviewAdapter, add_item, transaction


def import_questions(conn: sqlite3.Connection, data: Path, source: Path, author: str) -> Imported:
    out = Imported()
    loaded = load(data)
    out.problems += [str(p) for p in loaded.problems]
    with transaction(conn):
        for sample in loaded.items:
            record = {
                "benchmark": "toy",
                "id": sample.id,
                "Question": sample.question,
                "Options": [f"({'ABC'[i]}) {option}" for i, option in enumerate(sample.options)],
                "gold": sample.answer,
                "video": str(sample.media.videos[0].relative_to(data)),
            }
            add_item(conn, "answer", f"toy/{sample.id}", record, QUESTIONS, out)
    return out


def finds(data: Path) -> list[Path]:
    """What of a data folder this importer reads (for `annotate init`): the folder, when it
    holds toy questions."""
    return [data] if (data / QUESTIONS).is_file() else []


REVIEW = ReviewAdapter("toy", importers=(Importer("toy", import_questions, finds),))
