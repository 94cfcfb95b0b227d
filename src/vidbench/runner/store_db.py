"""The store's database file (runner/store.py has its tables' meaning): the schema of
store.sqlite and the columns added to it since, the connection (a damaged file is a StoreError
naming it), and `StoreFile`, what every table's methods share: opening (for writing, or read
only), one committed write at a time (a full disk is a DiskFullError naming the folder), and
usage sums.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from vidbench.core.errors import ConfigError, DiskFullError, VidbenchError
from vidbench.runner.usage import TOKEN_SUMS, usage_record

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    plan TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    plan TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    created REAL NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS responses_plan ON responses (plan, sample_id);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    plan TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    key TEXT,
    status TEXT NOT NULL,
    error TEXT NOT NULL,
    created REAL NOT NULL,
    change_first TEXT
);
CREATE INDEX IF NOT EXISTS failures_plan ON failures (plan, sample_id);
CREATE TABLE IF NOT EXISTS data_rows (
    sample_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, folder TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    item TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    reply TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0
);
"""
# How a vidbench before the failures' `change_first` column worded what a rejected call needs
# changed, at the end of its message ("... (change {what} first)"; the last "change " of it, as
# the server's words before may say "change" too): read once, when such a store gets the column.
_CHANGE_SAID = re.compile(r".*change (.+?) first\)", re.DOTALL)


def _change_from_messages(db: sqlite3.Connection) -> None:
    """Fill the new `change_first` of a store's rejected calls from their messages."""
    rows = db.execute("SELECT id, error FROM failures WHERE status = 'rejected'").fetchall()
    said = [(found.group(1), id_) for id_, error in rows if (found := _CHANGE_SAID.search(error))]
    db.executemany("UPDATE failures SET change_first = ? WHERE id = ?", said)


@dataclass(frozen=True)
class Added:
    """A column added to a table since it was first made: a store made before it gets it when
    opened for writing (ALTER TABLE, then `fill` in the same transaction), and reads
    `read_only` in its place when opened read-only."""

    column: str
    declared: str  # its type and default, as ALTER TABLE ADD takes them
    read_only: str
    fill: Callable[[sqlite3.Connection], None] | None = None


ADDED_COLUMNS = {
    "responses": Added("truncated", "INTEGER NOT NULL DEFAULT 0", "0"),
    "calls": Added("truncated", "INTEGER NOT NULL DEFAULT 0", "0"),
    "failures": Added("change_first", "TEXT", "NULL", _change_from_messages),
}
FULL_BELOW = 1 << 20  # bytes free under which a failed store write counts as a full disk


class StoreError(VidbenchError):
    """A write to the store failed for another reason than a full disk, or the store is not a
    readable database (named with the file)."""


class _Connection(sqlite3.Connection):
    """A connection to a store whose damage (a file cut short, overwritten, not a database) is
    a StoreError naming the file and what to do, wherever a query meets it, not a traceback.
    SQLite's other errors (a full disk: OperationalError) are the callers' to read."""

    store_path = Path()  # the store's file, set by `_connect`

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # as sqlite3 types it
        with _damage_named(self.store_path):
            return super().execute(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        with _damage_named(self.store_path):
            return super().executescript(script)


def _connect(path: Path, uri: str | None = None) -> _Connection:
    """A connection to the store at `path` (through `uri` when given: read-only)."""
    db = sqlite3.connect(uri or path, isolation_level=None, uri=bool(uri), factory=_Connection)
    db.store_path = path
    return db


@contextlib.contextmanager
def _damage_named(path: Path) -> Iterator[None]:
    """A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) as a StoreError saying what to do."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        if (getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF not in (11, 26):  # CORRUPT, NOTADB
            raise
        raise StoreError(
            f"{path} is damaged or not a vidbench store ({e}): its answers cannot be read. "
            "Restore it from a copy, or move it away with its -wal and -shm files to start over "
            "(`vidbench run --fresh` deletes them)"
        ) from e


class StoreFile:
    """One store.sqlite, opened for writing (the tables made, the added columns added) or
    read only; what the store's tables share (runner/store.Store is them all)."""

    FILENAME = "store.sqlite"

    def __init__(self, results_dir: Path) -> None:
        results_dir.mkdir(parents=True, exist_ok=True)
        self.path = results_dir / self.FILENAME
        self._selects: dict[str, str] = {}
        try:
            self._db = _connect(self.path)
        except sqlite3.OperationalError as e:  # not a file one can open: a folder, no right
            raise StoreError(f"{self.path}: cannot be opened as the store ({e})") from e
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            for table, added in ADDED_COLUMNS.items():  # a store made before them
                if self._added(table) != added.column:
                    self._add(table, added)
        except (StoreError, sqlite3.OperationalError) as e:  # damaged: said with what to do
            self._db.close()
            if isinstance(e, StoreError):
                raise
            if is_full(e, results_dir):
                raise DiskFullError(results_dir) from e
            raise StoreError(f"{self.path}: {e}") from e

    @classmethod
    def read_only(cls, results_dir: Path) -> Self:
        """An existing store opened for reading only (vidbench view): no table is made and every
        write is refused (SQLite may still add its -wal/-shm companion files to read a WAL
        database); ConfigError when there is none."""
        path = results_dir / cls.FILENAME
        if not path.is_file():
            raise ConfigError(f"{path} is missing")
        store = cls.__new__(cls)
        store.path = path
        store._selects = {}
        try:
            store._db = _connect(path, f"{path.resolve().as_uri()}?mode=ro")
        except sqlite3.DatabaseError as e:  # no right to read it
            raise StoreError(f"{path}: not readable ({e})") from e
        try:
            store._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except (StoreError, sqlite3.DatabaseError) as e:  # not a database, or a damaged one
            store.close()
            if isinstance(e, StoreError):
                raise
            raise StoreError(f"{path}: not readable ({e})") from e
        return store

    def close(self) -> None:
        self._db.close()

    def _added(self, table: str) -> str:
        """What selects `table`'s added column: the column, or what stands for it in a store
        made before it and opened read-only (ADDED_COLUMNS); looked up once."""
        if table not in self._selects:
            added = ADDED_COLUMNS[table]
            self._selects[table] = added.column if self._has(table, added) else added.read_only
        return self._selects[table]

    def _has(self, table: str, added: Added) -> bool:
        return added.column in {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def _add(self, table: str, added: Added) -> None:
        """Add the column to a store made before it, filled, in one transaction (unless
        another process added it meanwhile)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if not self._has(table, added):
                self._db.execute(f"ALTER TABLE {table} ADD {added.column} {added.declared}")
                if added.fill is not None:
                    added.fill(self._db)
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        self._selects[table] = added.column

    def _write(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """One write, committed at once; a full disk is a DiskFullError naming the folder (the
        failed write is rolled back, every earlier one is kept)."""
        try:
            return self._db.execute(sql, params)
        except sqlite3.OperationalError as e:
            if is_full(e, self.path.parent):
                raise DiskFullError(self.path.parent) from e
            raise StoreError(f"{self.path}: {e}") from e

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _usage(self, table: str, column: str, value: str) -> dict[str, int]:
        # table and column are this module's own names, never user input
        row = self._db.execute(
            f"SELECT COUNT(*), {TOKEN_SUMS} FROM {table} WHERE {column} = ?", (value,)
        ).fetchone()
        return usage_record(*row)


def is_full(error: sqlite3.OperationalError, folder: Path) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL), or an I/O error of a write on a disk
    with (almost) no room left: SQLite reports a failed WAL or journal write that way."""
    code = getattr(error, "sqlite_errorcode", 0) or 0
    if code == sqlite3.SQLITE_FULL:
        return True
    if code & 0xFF != sqlite3.SQLITE_IOERR:
        return False
    try:
        return shutil.disk_usage(folder).free < FULL_BELOW
    except OSError:
        return False
