"""Per-request plumbing: the database connection, the signed-in person, the CSRF check, the
templates (Jinja2 with autoescaping: every user and model text is shown as text) and `Text`, the
type of every text a request body carries."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import jinja2
from fastapi import Depends, HTTPException, Request
from fastapi import Path as PathPart
from fastapi.templating import Jinja2Templates
from pydantic import AfterValidator, Field

from vidbench.annotate import auth
from vidbench.annotate.auth import User
from vidbench.annotate.project import Project

SESSION_COOKIE = "vb_session"
LOGIN_COOKIE = "vb_login_csrf"  # double-submit token of the login form (no session yet)
HERE = Path(__file__).parent
# autoescape everything: captions, rules and model output are always shown as text
templates = Jinja2Templates(
    env=jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
)


def pretty_json(value: object) -> str:
    """JSON to read (indented, characters as they are), escaped by the template as any text;
    Jinja's `tojson` writes `\u003c` for `<`, which is for scripts, not for people."""
    return json.dumps(value, indent=1, ensure_ascii=False)


OPTION_LABEL = re.compile(r"\(([A-Z])\)\s*")


def option_text(option: object, index: int) -> str:
    """An option without the "(A) " label it may carry when that is its own letter: the page
    shows each option's letter once, as a key to press."""
    text = str(option)
    found = OPTION_LABEL.match(text)
    if found and found.group(1) == chr(ord("A") + index):
        return text[found.end() :]
    return text


templates.env.filters["pretty_json"] = pretty_json
templates.env.filters["option_text"] = option_text


def storable(value: str) -> str:
    """`value`, when it is text that can be stored (UTF-8); a ValueError naming the character
    otherwise. JSON's "\\ud800" escape is valid JSON but a lone surrogate, half of a character:
    SQLite and every file would refuse it later, as a server error."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(value[e.start])
        raise ValueError(
            f"character {e.start + 1} is a lone surrogate (\\u{code:04x}), half of a character; "
            "the text was not saved"
        ) from None
    return value


# a text field of a request body: a lone surrogate is a 422 naming the field (app.py), never a 500
Text = Annotated[str, AfterValidator(storable)]
# a row id or version: SQLite's integers are 64-bit, and a larger one would be a server error
# (OverflowError) where it is a 422 naming the field
INT64 = 2**63 - 1
Row = Annotated[int, Field(ge=0, le=INT64)]  # in a request body
RowId = Annotated[int, PathPart(ge=0, le=INT64)]  # in the path


def unusable_database(project: Project, error: Exception) -> str:
    """What a request is told when the database cannot be opened or written now (answered 503,
    to retry)."""
    return (
        f"the project's database {project.database} cannot be used now ({error}): nothing was "
        "saved; if the project folder was moved, start `annotate serve` on it again"
    )


class NotSignedIn(Exception):
    """No valid session: pages redirect to the login page, APIs answer 401."""


def project(request: Request) -> Project:
    return request.app.state.project


def connection(request: Request) -> Iterator[sqlite3.Connection]:
    conn = project(request).connect()
    try:
        yield conn
    finally:
        conn.close()


Conn = Annotated[sqlite3.Connection, Depends(connection)]


@dataclass(frozen=True)
class Viewer:
    user: User
    csrf: str
    conn: sqlite3.Connection


def viewer(request: Request, conn: Conn) -> Viewer:
    found = auth.session_user(conn, request.cookies.get(SESSION_COOKIE))
    if found is None:
        raise NotSignedIn()
    user, csrf = found
    if request.method not in ("GET", "HEAD") and not auth.same_token(
        csrf, request.headers.get("x-csrf-token")
    ):
        raise HTTPException(403, "missing or wrong CSRF token: reload the page")
    return Viewer(user, csrf, conn)


Signed = Annotated[Viewer, Depends(viewer)]


def reviewer(v: Signed) -> Viewer:
    if not v.user.reviews:
        raise HTTPException(403, "reviewers only")
    return v


def admin(v: Signed) -> Viewer:
    if not v.user.admin:
        raise HTTPException(403, "admins only")
    return v


Reviewer = Annotated[Viewer, Depends(reviewer)]
Admin = Annotated[Viewer, Depends(admin)]
