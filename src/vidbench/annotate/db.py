"""The project's SQLite store: schema and connections.

Every write to a person's work adds a row to `revisions` (author, time, content), so the whole
history is kept and nothing saved is ever overwritten without a trace. `work.version` is the
optimistic-concurrency counter: a save names the version it started from and is refused when
someone saved in between.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from typing_extensions import TypedDict  # pydantic (FastAPI's answers) reads typing's from 3.12

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, role TEXT NOT NULL,
    pw_hash TEXT NOT NULL, created TEXT NOT NULL, removed TEXT);
CREATE TABLE IF NOT EXISTS sessions (
    token TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), csrf TEXT NOT NULL,
    created REAL NOT NULL, expires REAL NOT NULL);
-- `removed`: when the account was removed (`annotate users remove`); the row stays, since
-- its work and revisions name it, but it cannot sign in and gets no work
-- one thing to do: a QA candidate to review, an object to caption, a question to answer,
-- a rule to red-team; `data` is its JSON (question, options, gold, provenance ...)
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, data TEXT NOT NULL,
    source TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL);
-- an item given to a person for a job (write | review | answer | redteam); `slot` orders the
-- five caption writers of an object; status `released`: the work of a removed person that was
-- not finished, back in the pool (kept for its history, counted nowhere)
CREATE TABLE IF NOT EXISTS work (
    id INTEGER PRIMARY KEY, item_id TEXT NOT NULL REFERENCES items(id),
    user_id INTEGER NOT NULL REFERENCES users(id), job TEXT NOT NULL, slot INTEGER NOT NULL,
    content TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'todo',
    comment TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 0,
    updated_by INTEGER REFERENCES users(id), updated_at TEXT,
    UNIQUE (item_id, user_id, job));
CREATE TABLE IF NOT EXISTS revisions (
    id INTEGER PRIMARY KEY, work_id INTEGER NOT NULL REFERENCES work(id),
    version INTEGER NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL,
    comment TEXT NOT NULL, author INTEGER NOT NULL REFERENCES users(id), at TEXT NOT NULL,
    UNIQUE (work_id, version));
-- a save refused because someone saved in between (usually the same person's other tab, or a
-- tab closed before it could show the conflict): the text is kept here and offered back on the
-- work's page until its author restores or discards it (`resolved` set), so no typing is lost
CREATE TABLE IF NOT EXISTS conflicts (
    id INTEGER PRIMARY KEY, work_id INTEGER NOT NULL REFERENCES work(id),
    user_id INTEGER NOT NULL REFERENCES users(id), base_version INTEGER NOT NULL,
    content TEXT NOT NULL, status TEXT, at TEXT NOT NULL, resolved TEXT);
-- sign-in attempts per account name and client address, counted before the password is
-- hashed (throttle.py); a success deletes the pair's row, `annotate users unlock` the account's
CREATE TABLE IF NOT EXISTS sign_in_attempts (
    account TEXT NOT NULL, client TEXT NOT NULL, attempts INTEGER NOT NULL,
    locked_until REAL NOT NULL, last REAL NOT NULL, PRIMARY KEY (account, client));
-- every other write (imports, assignments, red-team actions, exports) with author and time
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, author TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL,
    at TEXT NOT NULL);
-- what every request asks by something other than a table's key: a person's work of a job in
-- item order (my work, a work page's place), a job's work (caption review, exports, progress),
-- the items of a kind (assign, exports), a work's kept texts; without them each read scans the
-- whole table (a project of 100,000 items: every page reads every row). A job's work is by
-- item too: an index on the job alone was taken for "this item's work of that job" (an export's
-- items nobody was given), one search of a whole job's work per item
CREATE INDEX IF NOT EXISTS work_by_person ON work (user_id, job, item_id);
CREATE INDEX IF NOT EXISTS work_of_job ON work (job, item_id);
CREATE INDEX IF NOT EXISTS items_by_kind ON items (kind, deleted);
CREATE INDEX IF NOT EXISTS conflicts_by_work ON conflicts (work_id, user_id);
"""


class WorkRow(TypedDict):
    """A row of `work` as the schema above has it (what reads it adds its item's fields)."""

    id: int
    item_id: str
    user_id: int
    job: str
    slot: int
    content: str
    status: str
    comment: str
    version: int
    updated_by: int | None
    updated_at: str | None


# what SQLite says when the database cannot be used now (a lock held too long, a read-only or
# full disk, a file moved, cut short or not SQLite's): the request may succeed later. Its other
# errors (a statement it cannot run, a constraint broken, a misuse) are the code's bugs.
UNAVAILABLE = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_AUTH,
    }
)


def unavailable(error: sqlite3.Error) -> bool:
    """Whether `error` says the database cannot be used now (to retry), not that the code is
    wrong; by its primary result code (an extended one, e.g. SQLITE_IOERR_WRITE, included)."""
    code = getattr(error, "sqlite_errorcode", None)  # None: raised by Python's module itself
    return code is not None and (code & 0xFF) in UNAVAILABLE


COMMAND_LINE = "cli"  # the author the event log gives what the command line does: no account's
OPEN_STATUSES = ("todo", "draft", "returned")  # work that still needs its owner
RELEASED = "released"  # the status of a removed person's unfinished work (auth.remove_user)


def now() -> str:
    """UTC time with milliseconds, the stamp of every write."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, rows by name."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def create(path: Path) -> None:
    conn = connect(path)
    try:
        conn.executescript(SCHEMA)
        _add_columns(conn)
    finally:
        conn.close()


def _add_columns(conn: sqlite3.Connection) -> None:
    """Columns added since a table was first made: a project from an older version gains them."""
    have = {r["name"] for r in conn.execute("PRAGMA table_info(users)")}
    if "removed" not in have:
        conn.execute("ALTER TABLE users ADD COLUMN removed TEXT")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on any error): writers queue instead of failing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN ... COMMIT around reads: they all see the database as it was at the first one,
    whatever others write meanwhile (WAL), so reads that must agree (an export's) do."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def set_status(conn: sqlite3.Connection, work_ids: list[int], status: str, author: str) -> None:
    """Give each piece of work `status` as a new version with its revision, as a save would be:
    work given back (`released`) or given again is in its history, with who and when. The
    revision's author is the account named `author` (an admin on the admin page), else the
    work's owner (the command line, COMMAND_LINE, acts on their account). In the caller's
    transaction."""
    if not work_ids:
        return
    at, marks = now(), ",".join("?" * len(work_ids))
    found = conn.execute("SELECT id FROM users WHERE name = ?", (author,)).fetchone()
    by = "user_id" if found is None else str(int(found["id"]))
    conn.execute(
        f"UPDATE work SET status = ?, version = version + 1, updated_by = {by}, updated_at = ? "
        f"WHERE id IN ({marks})",
        (status, at, *work_ids),
    )
    conn.execute(
        "INSERT INTO revisions (work_id, version, content, status, comment, author, at) "
        "SELECT id, version, content, status, comment, updated_by, ? FROM work "
        f"WHERE id IN ({marks})",
        (at, *work_ids),
    )


def log_event(conn: sqlite3.Connection, author: str, action: str, detail: str) -> None:
    conn.execute(
        "INSERT INTO events (author, action, detail, at) VALUES (?, ?, ?, ?)",
        (author, action, detail, now()),
    )
