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
from typing import TYPE_CHECKING

from vidbench.annotate import db
from vidbench.annotate.paths import check_name
from vidbench.core.errors import ConfigError

if TYPE_CHECKING:
    from argon2 import PasswordHasher

ROLES = ("annotator", "reviewer", "admin")
SESSION_SECONDS = 12 * 3600
MIN_PASSWORD = 8
MAX_PASSWORD = 1024  # what the sign-in form takes (web/signin.py)


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str

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


def add_user(conn: sqlite3.Connection, name: str, role: str, password: str) -> User:
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    check_name(name, "user name")  # names become file names (exports): never a path
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:  # the account could never sign in
        raise ConfigError(f"the password has {len(password)} characters: at most {MAX_PASSWORD}")
    with db.transaction(conn):
        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise ConfigError(f"user {name!r} exists already")
        cur = conn.execute(
            "INSERT INTO users (name, role, pw_hash, created) VALUES (?, ?, ?, ?)",
            (name, role, _hasher().hash(password), db.now()),
        )
        db.log_event(conn, "cli", "user.add", f"{name} ({role})")
    return User(int(cur.lastrowid or 0), name, role)


@functools.cache
def _unknown_account_hash() -> str:
    return str(_hasher().hash(secrets.token_urlsafe(16)))


def check_password(conn: sqlite3.Connection, name: str, password: str) -> User | None:
    """The user, or None. One argon2 verification either way (the caller bounds how many run
    at once: throttle.HashSlots)."""
    from argon2.exceptions import VerificationError

    row = conn.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
    hasher = _hasher()
    if row is None:
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
    rows = conn.execute("SELECT id, name, role FROM users ORDER BY id").fetchall()
    return [User(r["id"], r["name"], r["role"]) for r in rows]


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
        "WHERE s.token = ? AND s.expires > ?",
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
