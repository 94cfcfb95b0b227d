"""`annotate init` and `annotate import PROJECT folder|NAME`: the items a dataset folder holds,
each kind read by the importer of the benchmark it belongs to (annotate/adapters.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.annotate.adapters import Adapters, Importer
from vidbench.annotate.items import Imported


def import_folder(
    conn: sqlite3.Connection, data: Path, author: str, adapters: Adapters
) -> Imported:
    """Everything every benchmark's importers find in a dataset folder, in their order."""
    out = Imported()
    for importer in adapters.importers():
        for source in importer.finds(data):
            out.merge(importer.read(conn, data, source, author))
    if not out.added and not out.skipped and not out.problems:  # never "0 items added" alone
        names = ", ".join(importer.name for importer in adapters.importers())
        what = "nothing there" if not data.exists() else f"nothing an importer reads ({names})"
        out.problems.append(f"{data}: {what}")
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
        out.merge(read_given(importer, conn, data, found, author))
    if source is None and not out.added and not out.problems and not importer.finds(data):
        out.problems.append(f"{data}: nothing for the {name} importer (give the file)")
    return out


def read_given(
    importer: Importer, conn: sqlite3.Connection, data: Path, source: Path, author: str
) -> Imported:
    """What `importer` reads from a file or folder a person gave (a command's argument, an
    upload): one in which it found nothing at all (an empty or half-written file, a folder or
    a file of another kind, a path to nothing) is named, never "0 added" as if all were there."""
    done = importer.read(conn, data, source, author)
    if not done.added and not done.skipped and not done.problems:
        what = "nothing there" if not source.exists() else "empty, or not what it reads"
        done.problems.append(f"{source}: nothing for the {importer.name} importer ({what})")
    return done
