"""Who does what, the way a team expects it:

- roles decide who gets work (JOBS): captions go to everyone who writes (annotators and
  reviewers), QA review and the audit queue to reviewers, baseline answers to annotators
  (reviewers have seen the gold answers), red-team rules to annotators and reviewers; admins
  only when asked (`admins`);
- all the items about one object or video (`items.subject`) go to the same people, unless
  `per_item`; a caption item is its object, so five writers an object;
- each item gets `n` distinct people, the least loaded first (counted in items of that job),
  larger subjects placed first, ties by user id: assignment is deterministic and balanced;
- running it again tops up items with fewer than `n` people (new users, new items), keeping a
  subject's new items with the people who have its others, and never takes work away.

`plan` says what would be added without writing anything (`vidbench annotate assign` prints it
before `apply` writes it; `--dry-run` stops there).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from vidbench.annotate import db
from vidbench.annotate.items import subject
from vidbench.core.errors import ConfigError


@dataclass(frozen=True)
class Job:
    kind: str  # the item kind
    job: str  # what the person does with it
    roles: tuple[str, ...]  # who is given it (admins too when asked)
    default_n: int


JOBS = {
    "caption": Job("caption", "write", ("annotator", "reviewer"), 5),  # five captions an object
    "qa": Job("qa", "review", ("reviewer",), 1),  # 2: double review
    "answer": Job("answer", "answer", ("annotator",), 1),  # 3 for MMWorld's raters
    "rule": Job("rule", "redteam", ("annotator", "reviewer"), 1),
    "audit": Job("audit", "audit", ("reviewer",), 1),  # keep, fix or drop (audit_queue.py)
}


@dataclass
class Share:
    """One person's part of a plan."""

    name: str
    role: str
    before: int  # pieces of work of this job they had
    items: int = 0  # added
    subjects: set[str] = field(default_factory=set)  # objects or videos they get items of

    @property
    def after(self) -> int:
        return self.before + self.items


@dataclass
class Plan:
    kind: str
    job: str
    n: int
    per_item: bool
    rows: list[tuple[str, int, int]] = field(default_factory=list)  # (item id, user id, slot)
    shares: list[Share] = field(default_factory=list)  # every eligible person, in user id order

    @property
    def added(self) -> int:
        return len(self.rows)

    def lines(self) -> list[str]:
        """The plan as a person reads it: one line per eligible person."""
        together = "each item on its own" if self.per_item else "an object's items together"
        head = f"{self.kind} items to {self.n} {'person' if self.n == 1 else 'people'} each "
        out = [head + f"({together}): {self.added} assignments to add"]
        width = max((len(s.name) for s in self.shares), default=4)
        for s in self.shares:
            n = len(s.subjects)
            objects = f"{n} object or video" if n == 1 else f"{n} objects or videos"
            what = f"+{s.items} items ({objects})" if s.items else "+0"
            out.append(f"  {s.name:<{width}}  {s.role:<9}  {what}: {s.before} -> {s.after}")
        return out

    def as_dict(self) -> dict[str, object]:
        shares = [
            {"name": s.name, "role": s.role, "before": s.before, "added": s.items,
             "subjects": len(s.subjects), "after": s.after}
            for s in self.shares
        ]  # fmt: skip
        return {"kind": self.kind, "n": self.n, "planned": self.added, "people": shares}


def eligible_roles(kind: str, admins: bool) -> tuple[str, ...]:
    roles = JOBS[kind].roles
    return (*roles, "admin") if admins else roles


def plan(
    conn: sqlite3.Connection,
    kind: str,
    n: int | None = None,
    admins: bool = False,
    per_item: bool = False,
) -> Plan:
    """What `apply` would add: every live item of `kind` topped up to `n` distinct people."""
    spec = JOBS[kind]
    n = spec.default_n if n is None else n
    roles = eligible_roles(kind, admins)
    marks = ",".join("?" * len(roles))
    people = conn.execute(
        f"SELECT id, name, role FROM users WHERE role IN ({marks}) AND removed IS NULL ORDER BY id",
        roles,
    ).fetchall()
    if len(people) < n:
        who = " or ".join(roles)
        hint = "" if admins else "; --admins gives admins work too"
        raise ConfigError(
            f"{kind} items need {n} distinct people each ({who}); the project has "
            f"{len(people)} (add users with `vidbench annotate users add`{hint})"
        )
    shares = {p["id"]: Share(p["name"], p["role"], 0) for p in people}
    for row in conn.execute(
        "SELECT w.user_id, COUNT(*) AS c FROM work w JOIN items i ON i.id = w.item_id "
        "WHERE w.job = ? AND i.deleted = 0 AND w.status != ? GROUP BY w.user_id",
        (spec.job, db.RELEASED),
    ):
        if row["user_id"] in shares:
            shares[row["user_id"]].before = row["c"]
    load = {p: s.before for p, s in shares.items()}

    have: dict[str, dict[int, int]] = {}  # item -> {user: slot}
    for r in conn.execute(
        "SELECT w.item_id, w.user_id, w.slot FROM work w JOIN items i ON i.id = w.item_id "
        "WHERE i.kind = ? AND i.deleted = 0 AND w.job = ? AND w.status != ?",
        (kind, spec.job, db.RELEASED),
    ):
        have.setdefault(r["item_id"], {})[r["user_id"]] = r["slot"]
    groups: dict[str, list[str]] = {}
    for item in conn.execute(  # the two fields `subject` reads, not each item's whole data
        "SELECT id, json_extract(data, '$.uid') AS uid, json_extract(data, '$.video') AS video "
        "FROM items WHERE kind = ? AND deleted = 0 ORDER BY id",
        (kind,),
    ):
        about = {"uid": item["uid"], "video": item["video"]}
        key = item["id"] if per_item else subject(about) or item["id"]
        groups.setdefault(key, []).append(item["id"])

    out = Plan(kind, spec.job, n, per_item, shares=list(shares.values()))
    # the largest subjects first, each to the least loaded: the counts end up balanced
    for key, members in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        held: dict[int, int] = {}  # eligible people already on this subject: how many items
        for item in members:
            for person in have.get(item, {}):
                if person in shares:
                    held[person] = held.get(person, 0) + 1
        team = sorted(held, key=lambda p: (-held[p], p))[:n]
        for item in members:
            mine = have.setdefault(item, {})
            missing = n - len(mine)
            if missing <= 0:
                continue
            free = [p for p in team if p not in mine]
            if len(free) < missing:  # the subject needs new people: the least loaded
                others = [p for p in shares if p not in team and p not in mine]
                others.sort(key=lambda p: (load[p], p))
                team += others[: missing - len(free)]
                free = [p for p in team if p not in mine]
            slot = max(mine.values(), default=0)
            for person in free[:missing]:
                slot += 1
                mine[person] = slot
                out.rows.append((item, person, slot))
                load[person] += 1
                shares[person].items += 1
                shares[person].subjects.add(key)
    return out


def apply(conn: sqlite3.Connection, planned: Plan, author: str) -> int:
    """Write a plan's assignments (those someone added in between are left as they are; work
    the person gave back earlier, on a role change, is theirs again, with its text); returns
    how many were added."""
    added = 0
    with db.transaction(conn):
        for item, person, slot in planned.rows:
            back = conn.execute(  # given back earlier: theirs again, in its history
                "UPDATE work SET slot = ? WHERE item_id = ? AND user_id = ? AND job = ? "
                "AND status = ? RETURNING id, EXISTS (SELECT 1 FROM revisions r WHERE "
                "r.work_id = work.id AND r.status != ?) AS started",
                (slot, item, person, planned.job, db.RELEASED, db.RELEASED),
            ).fetchone()
            if back is not None:
                db.set_status(conn, [back["id"]], "draft" if back["started"] else "todo", author)
                added += 1
                continue
            added += conn.execute(
                "INSERT INTO work (item_id, user_id, job, slot) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (item_id, user_id, job) DO NOTHING",
                (item, person, planned.job, slot),
            ).rowcount
        together = "per item" if planned.per_item else "by object"
        detail = f"{planned.kind} x{planned.n} ({together}): {added} added"
        db.log_event(conn, author, "assign", detail)
    return added


def assign(
    conn: sqlite3.Connection,
    kind: str,
    n: int | None,
    author: str,
    admins: bool = False,
    per_item: bool = False,
) -> int:
    """Plan and apply at once; returns how many assignments were added."""
    return apply(conn, plan(conn, kind, n, admins, per_item), author)
