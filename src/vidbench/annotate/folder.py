"""`annotate init` and `annotate import PROJECT folder|NAME`: the items a dataset folder holds,
each kind read by the importer of the benchmark it belongs to (annotate/adapters.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.annotate.adapters import Adapters
from vidbench.annotate.items import Imported


def import_folder(
    conn: sqlite3.Connection, data: Path, author: str, adapters: Adapters
) -> Imported:
    """Everything every benchmark's importers find in a dataset folder, in their order."""
    out = Imported()
    for importer in adapters.importers():
        for source in importer.finds(data):
            out.merge(importer.read(conn, data, source, author))
    return out


def import_named(
    conn: sqlite3.Connection,
    data: Path,
    name: str,
    source: Path | None,
    author: str,
    adapters: Adapters,
) -> Imported:
    """One importer (`annotate import PROJECT NAME [FILE]`): the file or folder given, else what
    it finds in the project's data folder; `folder` runs them all on the folder given."""
    if name == "folder":
        return import_folder(conn, source or data, author, adapters)
    importer = adapters.importer(name)
    out = Imported()
    for found in [source] if source is not None else importer.finds(data):
        out.merge(importer.read(conn, data, found, author))
    if source is None and not out.added and not out.problems and not importer.finds(data):
        out.problems.append(f"{data}: nothing for the {name} importer (give the file)")
    return out
