"""Accounts, passwords (argon2id via argon2-cffi), sessions and CSRF tokens.

A session is a random token in an HttpOnly, SameSite=Strict cookie; each session has its own
CSRF token, which every state-changing request must send back (header X-CSRF-Token or form
field `csrf`). Tokens come from `secrets`; comparisons are constant-time.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import secrets
import sqlite3
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from vidbench.annotate import db
from vidbench.annotate.assign import JOBS
from vidbench.annotate.paths import check_name
from vidbench.core.errors import ConfigError

if TYPE_CHECKING:
    from argon2 import PasswordHasher

Role = Literal["annotator", "reviewer", "admin"]
ROLES: tuple[str, ...] = get_args(Role)
SESSION_SECONDS = 12 * 3600
MIN_PASSWORD = 8
MAX_PASSWORD = 1024  # what the sign-in form takes (web/signin.py)


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str
    removed: str | None = None  # when the account was removed (remove_user)

    @property
    def reviews(self) -> bool:
        return self.role in ("reviewer", "admin")

    @property
    def admin(self) -> bool:
        return self.role == "admin"


def _hasher() -> PasswordHasher:
    from vidbench.extras import require

    require("the annotation app", ["argon2"], "annotate")
    from argon2 import PasswordHasher

    return PasswordHasher()


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r} (one of {', '.join(ROLES)})")


def add_user(
    conn: sqlite3.Connection, name: str, role: str, password: str, author: str = db.COMMAND_LINE
) -> User:
    """A new account (`author`: who added it, for the event log)."""
    _check_role(role)
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:  # the account could never sign in
        raise ConfigError(f"the password has {len(password)} characters: at most {MAX_PASSWORD}")
    pw_hash = _hasher().hash(password)  # before the write lock: hashing takes a while
    with db.transaction(conn):
        check_free_name(conn, name)
        cur = conn.execute(
            "INSERT INTO users (name, role, pw_hash, created) VALUES (?, ?, ?, ?)",
            (name, role, pw_hash, db.now()),
        )
        db.log_event(conn, author, "user.add", f"{name} ({role})")
    return User(int(cur.lastrowid or 0), name, role)


def new_password() -> str:
    """A password for an account added without one (the admin page), to hand to its person:
    20 characters from `secrets`, shown once."""
    return secrets.token_urlsafe(15)


def check_free_name(conn: sqlite3.Connection, name: str) -> None:
    """A ConfigError when `name` cannot be a new account's (checked before a password is asked
    for, and again when the account is added)."""
    check_name(name, "user name")  # names become file names (exports): never a path
    if name == db.COMMAND_LINE:  # the event log and the history would credit it with the CLI's
        raise ConfigError(
            f"{name!r} is the name the event log gives the command line: choose another"
        )
    found = conn.execute("SELECT removed FROM users WHERE name = ?", (name,)).fetchone()
    if found and found["removed"]:
        raise ConfigError(
            f"user {name!r} was removed at {found['removed']}; their work keeps the name: "
            "choose another name"
        )
    if found:
        raise ConfigError(f"user {name!r} exists already")


@functools.cache
def _unknown_account_hash() -> str:
    return str(_hasher().hash(secrets.token_urlsafe(16)))


def check_password(conn: sqlite3.Connection, name: str, password: str) -> User | None:
    """The user, or None. One argon2 verification either way (the caller bounds how many run
    at once: throttle.HashSlots)."""
    from argon2.exceptions import VerificationError

    row = conn.execute("SELECT * FROM users WHERE name = ? AND removed IS NULL", (name,)).fetchone()
    hasher = _hasher()
    if row is None:  # no such account, or a removed one
        # the same work as for a real account, so timing does not tell which names exist
        with contextlib.suppress(VerificationError):
            hasher.verify(_unknown_account_hash(), password)
        return None
    try:
        hasher.verify(row["pw_hash"], password)
    except VerificationError:
        return None
    return User(row["id"], row["name"], row["role"])


def users(conn: sqlite3.Connection) -> list[User]:
    """Every account, removed ones too (their work keeps their name)."""
    rows = conn.execute("SELECT id, name, role, removed FROM users ORDER BY id").fetchall()
    return [User(r["id"], r["name"], r["role"], r["removed"]) for r in rows]


def _account(conn: sqlite3.Connection, name: str) -> User:
    """The account still in use named `name`, or a ConfigError saying why not."""
    row = conn.execute("SELECT id, name, role, removed FROM users WHERE name = ?", (name,))
    found = row.fetchone()
    if found is None:
        known = ", ".join(u.name for u in users(conn) if not u.removed) or "none"
        raise ConfigError(f"no user {name!r} (the project's accounts: {known})")
    if found["removed"]:
        raise ConfigError(f"user {name!r} was removed at {found['removed']}")
    return User(found["id"], found["name"], found["role"])


def _keep_an_admin(conn: sqlite3.Connection, user: User, what: str) -> None:
    """A ConfigError when `user` is the project's last admin: nobody could assign or export."""
    admins = conn.execute(
        "SELECT COUNT(*) FROM users WHERE role = 'admin' AND removed IS NULL"
    ).fetchone()[0]
    if user.admin and admins <= 1:
        raise ConfigError(
            f"{user.name} is the project's last admin and cannot be {what}: nobody could assign "
            "work or export; make another admin first (People on the admin page, or "
            "`vidbench annotate users role PROJECT NAME admin`)"
        )


def _release(
    conn: sqlite3.Connection, user: User, jobs: tuple[str, ...] | None, author: str
) -> dict[str, int]:
    """Put a person's unfinished work of `jobs` (None: all) back in the pool (status
    `released`: kept with its history, counted by no export or assignment, so `assign` gives
    the items to others); how many pieces on live items, per item kind. In a transaction of
    the caller's."""
    if jobs == ():
        return {}
    where = f"w.user_id = ? AND w.status IN ({','.join('?' * len(db.OPEN_STATUSES))})"
    if jobs is not None:
        where += f" AND w.job IN ({','.join('?' * len(jobs))})"
    args = (user.id, *db.OPEN_STATUSES, *(jobs or ()))
    released = {
        r["kind"]: r["n"]
        for r in conn.execute(
            "SELECT i.kind, COUNT(*) AS n FROM work w JOIN items i ON i.id = w.item_id "
            f"WHERE {where} AND i.deleted = 0 GROUP BY i.kind ORDER BY i.kind",
            args,
        )
    }
    ids = [r["id"] for r in conn.execute(f"SELECT w.id FROM work w WHERE {where}", args)]
    db.set_status(conn, ids, db.RELEASED, author)
    back = ", ".join(f"{kind} {n}" for kind, n in released.items()) or "none"
    db.log_event(conn, author, "work.release", f"{user.name}: {back}")
    return released


@dataclass(frozen=True)
class Changed:
    """What changing an account did: the user as it is now, sessions ended (removal), and its
    unfinished work on live items put back in the pool, counted per item kind."""

    user: User
    before: str  # the role it had
    sessions: int
    released: dict[str, int]


def set_role(conn: sqlite3.Connection, name: str, role: str, author: str) -> Changed:
    """Give an account another role, effective on its next request. Its unfinished work of jobs
    the new role is not given goes back to the pool (an annotator made reviewer sees the gold
    answers: their baseline answers would no longer be blind); an admin keeps everything."""
    _check_role(role)
    with db.transaction(conn):
        user = _account(conn, name)
        if role == user.role:
            return Changed(user, role, 0, {})
        if role != "admin":
            _keep_an_admin(conn, user, f"made {role}")
        conn.execute("UPDATE users SET role = ? WHERE id = ?", (role, user.id))
        db.log_event(conn, author, "user.role", f"{name}: {user.role} -> {role}")
        unfit = set() if role == "admin" else {j.job for j in JOBS.values() if role not in j.roles}
        released = _release(conn, user, tuple(sorted(unfit)), author)
    return Changed(User(user.id, name, role), user.role, 0, released)


def remove_user(conn: sqlite3.Connection, name: str, author: str) -> Changed:
    """End an account: its sessions end at once, it cannot sign in, it gets no more work, and its
    unfinished work (to do, draft, sent back) becomes `released`, which no count, export or
    assignment counts, so `assign` gives those items to others. The row, its submitted work and
    every revision stay, under its name."""
    with db.transaction(conn):
        user = _account(conn, name)
        _keep_an_admin(conn, user, "removed")
        sessions = conn.execute(  # the live ones: an expired session ends nothing
            "SELECT COUNT(*) FROM sessions WHERE user_id = ? AND expires > ?",
            (user.id, time.time()),
        ).fetchone()[0]
        conn.execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))
        released = _release(conn, user, None, author)
        at = db.now()
        conn.execute("UPDATE users SET removed = ? WHERE id = ?", (at, user.id))
        db.log_event(conn, author, "user.remove", name)
    return Changed(User(user.id, name, user.role, at), user.role, sessions, released)


def open_session(conn: sqlite3.Connection, user: User) -> tuple[str, str]:
    """(session token, CSRF token) of a new session."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    t = time.time()
    with db.transaction(conn):
        conn.execute("DELETE FROM sessions WHERE expires < ?", (t,))
        conn.execute(
            "INSERT INTO sessions (token, user_id, csrf, created, expires) VALUES (?, ?, ?, ?, ?)",
            (token, user.id, csrf, t, t + SESSION_SECONDS),
        )
    return token, csrf


def session_user(conn: sqlite3.Connection, token: str | None) -> tuple[User, str] | None:
    """The session's user and CSRF token, or None (no, unknown or expired session)."""
    if not token:
        return None
    row = conn.execute(
        "SELECT u.id, u.name, u.role, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id "
        "WHERE s.token = ? AND s.expires > ? AND u.removed IS NULL",
        (token, time.time()),
    ).fetchone()
    if row is None:
        return None
    return User(row["id"], row["name"], row["role"]), row["csrf"]


def close_session(conn: sqlite3.Connection, token: str) -> None:
    with db.transaction(conn):
        conn.execute("DELETE FROM sessions WHERE token = ?", (token,))


def same_token(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())
