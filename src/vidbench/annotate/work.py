"""Reading and saving people's work, with access rules and optimistic concurrency.

Access: a person reads and writes only the work given to them; reviewers (and admins) also read
caption work to review it and may send it back or accept it, but never change its text, and only
once it is written (submitted, or accepted and sent back again): a caption nobody wrote cannot
be accepted. Reviewers read submitted captions only: a caption not yet submitted is not theirs
to read, and one they sent back shows the text they sent back, never what its writer has typed
since (unsubmitted drafts stay the writer's). Asking for anything else answers "no such work",
the same as for an id that does not exist, so ids cannot be probed.

Saving: every save names the version it started from. When someone saved in between, nothing is
written and the caller gets a `Conflict` with what is stored now (text, author, time) to show;
the refused text is kept (conflicts.py) and offered back on the work's page, so a tab closed
before it could show the conflict loses nothing. Every accepted save is a new row in
`revisions`, so all history is kept.

Machine drafts on an item (a model's caption a person may start from): a text submitted word for
word as a draft is the model's, not a person's (`draft_source`), and no export counts it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired

from pydantic import JsonValue
from typing_extensions import TypedDict  # pydantic (FastAPI's answers) reads typing's from 3.12

from vidbench.annotate import conflicts, db
from vidbench.annotate.audit_queue import check_review
from vidbench.annotate.auth import User
from vidbench.core.errors import DataError
from vidbench.core.files import Json

MAX_TEXT = 5000
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # option letters: an answer is "(A)", "(B)", ...
OWNER_STATUSES = ("draft", "submitted")
REVIEW_STATUSES = ("returned", "accepted")
REVIEWABLE = ("submitted", "accepted")  # written work; a reviewer acts on nothing else
# what a reviewer may read of someone's caption: written work, and work sent back (as it was sent)
REVIEWER_READS = (*REVIEWABLE, "returned")
DECISIONS = ("accept", "edit", "reject")


class NoSuchWork(DataError):
    """Not there, or not this person's: the same answer for both."""


class Work(db.WorkRow):
    """A row of `work` with its item's kind, ref, data (decoded) and withdrawal, and the names
    of its owner and of who saved it last."""

    kind: str
    ref: str
    data: dict[str, JsonValue]
    deleted: int
    updated_by_name: str | None
    owner: str
    given_again: bool  # this version gave the work out again after it was given back


class Saved(TypedDict):
    """What a save answers: the work's new version and status, and a warning when its item
    was withdrawn."""

    id: int
    version: int
    status: str
    updated_at: str
    warning: NotRequired[str]


@dataclass(frozen=True)
class Written:
    """A save as written: the work's id, its new version and status, when, and its text."""

    id: int
    version: int
    status: str
    at: str
    content: str


@dataclass
class Conflict(Exception):
    """Someone saved since the version the caller started from; `kept` is the row id of the
    refused text in conflicts.py (None when the save carried no text)."""

    current: Work
    kept: int | None = None

    def __str__(self) -> str:
        at, version = self.current["updated_at"], self.current["version"]
        return f"{last_change(self.current)} at {at} (version {version}) since you loaded it"


def last_change(work: Work, user: User | None = None) -> str:
    """What the latest version did, as its reader is told: "saved by rita", or, when it gave the
    work out again after it was given back, "given to you by ada" (the admin who did; "given to
    you again" from the command line, which acts on the owner's account), to `user`."""
    who = work["updated_by_name"] or "someone"
    if not work["given_again"]:
        return f"saved by {who}"
    to = "you" if user is not None and user.id == work["user_id"] else work["owner"]
    if work["updated_by"] == work["user_id"]:  # the command line's, on the owner's account
        return f"given to {to} again"
    return f"given to {to} by {who}"


def row(conn: sqlite3.Connection, work_id: int) -> Work | None:
    found = conn.execute(
        "SELECT w.*, i.kind, i.ref, i.data, i.deleted, u.name AS updated_by_name, "
        "o.name AS owner, (SELECT r.status FROM revisions r WHERE r.work_id = w.id "
        "AND r.version = w.version - 1) = ? AS given_again FROM work w "
        "JOIN items i ON i.id = w.item_id "
        "JOIN users o ON o.id = w.user_id LEFT JOIN users u ON u.id = w.updated_by "
        "WHERE w.id = ? AND w.status != ?",
        (db.RELEASED, work_id, db.RELEASED),
    ).fetchone()
    if found is None:  # no such work, or work given back (auth.remove_user, set_role): nobody's
        return None
    return Work(
        id=found["id"], item_id=found["item_id"], user_id=found["user_id"], job=found["job"],
        slot=found["slot"], content=found["content"], status=found["status"],
        comment=found["comment"], version=found["version"], updated_by=found["updated_by"],
        updated_at=found["updated_at"], kind=found["kind"], ref=found["ref"],
        data=json.loads(found["data"]), deleted=found["deleted"],
        updated_by_name=found["updated_by_name"], owner=found["owner"],
        given_again=bool(found["given_again"]),
    )  # fmt: skip


def get(conn: sqlite3.Connection, work_id: int, user: User) -> Work:
    """The work as `user` may see it (a reviewer: the submitted text); NoSuchWork otherwise."""
    found = row(conn, work_id)
    if found is None or not may_read(found, user):
        raise NoSuchWork(f"no work {work_id} for {user.name}")
    if found["user_id"] != user.id and found["status"] == "returned":
        found["content"] = reviewed_text(conn, work_id)
    return found


def may_read(work: Work, user: User) -> bool:
    """The owner's, or a caption written and submitted, for a reviewer."""
    if work["user_id"] == user.id:
        return True
    return user.reviews and work["job"] == "write" and work["status"] in REVIEWER_READS


def reviewed_text(conn: sqlite3.Connection, work_id: int) -> str:
    """The text last submitted (what a reviewer saw, accepted or sent back): the writer's later
    edits, not yet submitted, are not part of it."""
    found = conn.execute(
        "SELECT content FROM revisions WHERE work_id = ? AND status IN (?, ?) "
        "ORDER BY version DESC LIMIT 1",
        (work_id, *REVIEWABLE),
    ).fetchone()
    return "" if found is None else str(found["content"])


def mine(
    conn: sqlite3.Connection, user: User, job: str | None = None
) -> list[dict[str, JsonValue]]:
    """This person's live work, in item order, each with its item's kind and data (its JSON
    text: a list of thousands reads few of them)."""
    query = (
        "SELECT w.id, w.item_id, w.job, w.status, w.version, w.comment, w.updated_at, i.kind, "
        "i.ref, i.data FROM work w JOIN items i ON i.id = w.item_id "
        "WHERE w.user_id = ? AND i.deleted = 0 AND w.status != ?"
    )
    args: list[JsonValue] = [user.id, db.RELEASED]
    if job:
        query += " AND w.job = ?"
        args.append(job)
    return [dict(r) for r in conn.execute(query + " ORDER BY w.item_id", args)]


OPEN_STATUSES = db.OPEN_STATUSES  # work that still needs its owner


@dataclass(frozen=True)
class Place:
    """Where a piece of work stands in its owner's list of that job (item order)."""

    position: int  # 1-based
    total: int
    previous: int | None  # work ids
    next: int | None
    next_open: int | None  # the next that still needs them (after this one, else before)
    left: int  # how many of the job's items still need them, this one aside


def place(conn: sqlite3.Connection, user: User, current: Work) -> Place:
    """`current`'s place among this person's live work of the same job."""
    rows = conn.execute(
        "SELECT w.id, w.status FROM work w JOIN items i ON i.id = w.item_id WHERE w.user_id = ? "
        "AND w.job = ? AND i.deleted = 0 AND w.status != ? ORDER BY w.item_id",
        (user.id, current["job"], db.RELEASED),
    ).fetchall()
    ids = [r["id"] for r in rows]
    at = ids.index(current["id"]) if current["id"] in ids else len(ids)
    waiting = [(k, r["id"]) for k, r in enumerate(rows) if r["status"] in OPEN_STATUSES and k != at]
    after = [i for k, i in waiting if k > at]
    return Place(
        position=at + 1,
        total=len(ids),
        previous=ids[at - 1] if 0 < at <= len(ids) else None,
        next=ids[at + 1] if at + 1 < len(ids) else None,
        next_open=(after or [i for _, i in waiting] or [None])[0],
        left=len(waiting),
    )


def answers(item: dict[str, JsonValue]) -> list[str]:
    """The answers a question takes: "(A)" to its last option's letter (four without options)."""
    options = item.get("Options")
    n = len(options) if isinstance(options, list) and options else 4
    return [f"({letter})" for letter in LETTERS[: min(n, len(LETTERS))]]


# (item data, edited record) -> the record as its benchmark keeps it; DataError when it is not one
CheckEdit = Callable[[dict[str, JsonValue], Any], Any]


def max_length(job: str, item: Mapping[str, JsonValue]) -> int:
    """The most characters a save's content holds: MAX_TEXT, and for a QA review also the
    item's own record, which an edit carries whole (a question of 10,000 characters can be
    edited too)."""
    if job != "review":
        return MAX_TEXT
    return MAX_TEXT + len(json.dumps(item, ensure_ascii=False))


def check_content(
    job: str,
    content: str,
    status: str,
    item: dict[str, JsonValue] | None = None,
    check_edit: CheckEdit | None = None,
) -> None:
    """DataError naming what is wrong with a save's content for this job (`item`: the item's
    data, whose machine drafts a submitted caption must not repeat unedited; `check_edit`: how
    the item's benchmark checks an edited record, annotate/adapters.py)."""
    limit = max_length(job, item or {})
    if len(content) > limit:
        raise DataError(f"too long: {len(content)} characters (at most {limit})")
    if job == "answer" and content not in ("", *answers(item or {})):
        choices = ", ".join(answers(item or {}))
        raise DataError(f"an answer is one of {choices}, got {content[:20]!r}")
    if job == "answer" and status == "submitted" and not content:
        raise DataError("choose an answer before submitting")
    if job == "audit":
        check_review(content, status, item or {})
    if job == "review" and status == "submitted" and not content:
        raise DataError("choose accept, edit or reject before submitting")
    if job == "write" and status == "submitted" and not content.strip():
        raise DataError("an empty caption cannot be submitted")
    if job == "write" and status == "submitted" and (model := draft_source(item or {}, content)):
        raise DataError(f"this is {model}'s machine draft word for word: edit it into your own")
    if job == "review" and content:
        try:
            review = json.loads(content)
        except json.JSONDecodeError as e:
            raise DataError(f"a review must be JSON ({e})") from e
        decision = review.get("decision") if isinstance(review, dict) else None
        if decision not in ("", None, *DECISIONS):
            raise DataError(f"unknown decision {decision!r} (one of {', '.join(DECISIONS)})")
        if status == "submitted":
            if decision is None:
                raise DataError("choose accept, edit or reject before submitting")
            if decision == "reject" and not str(review.get("reason", "")).strip():
                raise DataError("a rejection needs a reason")
            if decision == "edit":
                if check_edit is None:
                    raise DataError("edits cannot be checked here: no benchmark to check them")
                check_edit(item or {}, review.get("edited"))


def save(
    conn: sqlite3.Connection,
    work_id: int,
    user: User,
    base_version: int,
    content: str | None = None,
    status: str | None = None,
    comment: str | None = None,
    resolves: tuple[int, ...] = (),
    check_edit: CheckEdit | None = None,
) -> Saved:
    """Apply one save (owner: content and draft/submitted; reviewer: returned/accepted and a
    comment; `resolves`: kept conflicts this save settles; `check_edit`: how an edited record is
    checked). Raises NoSuchWork, DataError (bad content, not allowed) or Conflict (the owner's
    refused text kept, its id in `kept`)."""
    kept, saved = None, None
    with db.transaction(conn):
        work = row(conn, work_id)
        owner = work is not None and work["user_id"] == user.id
        if work is None or not (owner or (user.reviews and work["job"] == "write")):
            raise NoSuchWork(f"no work {work_id} for {user.name}")
        if owner and status not in (None, *OWNER_STATUSES):
            raise DataError(f"you cannot set your own work to {status!r}")
        if not owner:  # before the version: a conflict must not show a text not yet submitted
            _check_review(content, status, comment)
            _check_reviewable(work)
        if work["version"] == base_version:
            saved = _write(conn, work, user, content, status, comment, check_edit)
            if owner:
                conflicts.resolve_saved(conn, work_id, user.id, saved.content, list(resolves))
        elif owner and content is not None and content != work["content"]:
            check_content(work["job"], content, "draft", work["data"], check_edit)
            kept = conflicts.keep(conn, work_id, user.id, base_version, content, status)
    if saved is None:  # the kept text is committed with the transaction above
        raise Conflict(work, kept)
    out = Saved(id=saved.id, version=saved.version, status=saved.status, updated_at=saved.at)
    if work["deleted"]:
        out["warning"] = "this item was withdrawn: your work is kept but leaves the exports"
    return out


def _write(
    conn: sqlite3.Connection,
    work: Work,
    user: User,
    content: str | None,
    status: str | None,
    comment: str | None,
    check_edit: CheckEdit | None = None,
) -> Written:
    """The save itself, on the version it started from (inside the caller's transaction)."""
    owner = work["user_id"] == user.id
    new_content = work["content"] if content is None else content
    new_status = status or ("draft" if work["status"] == "todo" else work["status"])
    if owner and content is not None and status is None and work["status"] == "accepted":
        new_status = "submitted"  # an accepted text changed: it needs review again
    check_content(work["job"], new_content, new_status, work["data"], check_edit)
    new_comment = work["comment"] if comment is None else comment
    at, version = db.now(), work["version"] + 1
    conn.execute(
        "UPDATE work SET content = ?, status = ?, comment = ?, version = ?, updated_by = ?, "
        "updated_at = ? WHERE id = ? AND version = ?",
        (new_content, new_status, new_comment, version, user.id, at, work["id"], work["version"]),
    )
    conn.execute(
        "INSERT INTO revisions (work_id, version, content, status, comment, author, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (work["id"], version, new_content, new_status, new_comment, user.id, at),
    )
    return Written(work["id"], version, new_status, at, new_content)


def _check_review(content: str | None, status: str | None, comment: str | None) -> None:
    """A reviewer's save sets a status (and a comment), never the text."""
    if content is not None or status not in REVIEW_STATUSES:
        raise DataError("a reviewer may only send work back or accept it")
    if status == "returned" and not (comment or "").strip():
        raise DataError("say why when sending work back")


def _check_reviewable(work: Work) -> None:
    """Only written work is reviewed: submitted (or accepted, to send it back), with a text."""
    if work["status"] not in REVIEWABLE or not work["content"].strip():
        state = "empty" if not work["content"].strip() else work["status"]
        raise DataError(f"only written work can be reviewed: this one is {state}")


class Step(TypedDict):
    """One revision in a history: whose work, its version and status, who made it, when."""

    owner: str
    version: int
    status: str
    author: str
    at: str


def history(conn: sqlite3.Connection, work: Work, user: User) -> list[Step]:
    """The revisions of `work`, oldest first; for a reviewer, those of every piece of work of
    its item and job (a QA review given back by one reviewer and given to another shows both).
    Never the texts: a draft stays its writer's, and writers do not see each other's."""
    query = (
        "SELECT o.name AS owner, r.version, r.status, a.name AS author, r.at FROM revisions r "
        "JOIN work w ON w.id = r.work_id JOIN users o ON o.id = w.user_id "
        "JOIN users a ON a.id = r.author WHERE "
    )
    args: tuple[str | int, ...]
    if user.reviews:
        where, args = "w.item_id = ? AND w.job = ?", (work["item_id"], work["job"])
    else:
        where, args = "w.id = ?", (work["id"],)
    found = conn.execute(query + where + " ORDER BY r.at, r.id", args)
    return [
        Step(owner=r["owner"], version=r["version"], status=r["status"], author=r["author"],
             at=r["at"])
        for r in found
    ]  # fmt: skip


def public(work: Work) -> dict[str, Json]:
    """What the page and API show: never the gold answer of a question to answer."""
    data = dict(work["data"])
    if work["job"] == "answer":
        data.pop("gold", None)
        data.pop("Answer index", None)
        data.pop("provenance", None)
    return {
        "id": work["id"],
        "item_id": work["item_id"],
        "job": work["job"],
        "content": work["content"],
        "status": work["status"],
        "comment": work["comment"],
        "version": work["version"],
        "updated_at": work["updated_at"],
        "data": data,
        "owner": work["owner"],
        "deleted": bool(work["deleted"]),
        "updated_by": work["updated_by_name"],
        "given_again": work["given_again"],
    }


def draft_source(item_data: Mapping[str, JsonValue], caption: str) -> str | None:
    """The model whose draft this caption is, word for word (whitespace aside), or None."""
    words = " ".join(caption.split())
    drafts = item_data.get("drafts")
    for draft in drafts if isinstance(drafts, list) else []:
        text = draft.get("caption") if isinstance(draft, dict) else None
        if isinstance(draft, dict) and isinstance(text, str) and " ".join(text.split()) == words:
            return str(draft.get("model"))
    return None
