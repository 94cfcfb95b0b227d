"""A project's red-team workspace (PROJECT/redteam/) driven from the browser: the benchmark's
engine (its ReviewAdapter's `red_team`, e.g. AutoEval-Video's) is used as it is; this module only
serialises access (one writer at a time) and logs each action with its author.

A rule's attacks, versions and rounds belong to the rule, not to whoever made them: when that
person is removed (auth.remove_user) they stay, and the next person given the rule goes on from
them (an attack not yet checked is checked in their next round). `history` names who made each,
marked when that account was removed."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

from vidbench.annotate import auth, db
from vidbench.annotate.adapters import RedTeam, RedTeamRecord, RuleWorkspace
from vidbench.annotate.items import Exported
from vidbench.annotate.project import Project
from vidbench.core.errors import ConfigError
from vidbench.models.registry import ModelChoice

LOCK = threading.Lock()  # the workspace is one JSON file: one change at a time
# who made what, as this module writes it: an attack's note, a version's note, a check's event
ATTACK_BY = re.compile(r"by (\S+)")
VERSION_BY = re.compile(r".*\(by (\S+)\)", re.S)
ROUND_EVENT = re.compile(r"ID (\S+): round (\d+) ")
T = TypeVar("T")


def workspace(project: Project, engine: RedTeam | None, conn: sqlite3.Connection) -> RuleWorkspace:
    """The project's workspace, made from the rules file its rule items came from."""
    if engine is None:
        raise ConfigError("no benchmark here red-teams rules")
    if (project.redteam / engine.workspace_file).is_file():
        return engine.open(project.redteam, None)
    found = conn.execute("SELECT source FROM items WHERE kind = 'rule' LIMIT 1").fetchone()
    if found is None:
        raise ConfigError("this project has no rules to red-team")
    return engine.open(project.redteam, Path(found["source"]))


def _change(
    project: Project,
    engine: RedTeam | None,
    conn: sqlite3.Connection,
    author: str,
    event: str,
    change: Callable[[RuleWorkspace], T],
    describe: Callable[[T], str],
) -> T:
    """`change` the workspace under the lock, then log `event` by `author`, described."""
    with LOCK:
        done = change(workspace(project, engine, conn))
    with db.transaction(conn):
        db.log_event(conn, author, event, describe(done))
    return done


def attack(
    project: Project,
    engine: RedTeam | None,
    conn: sqlite3.Connection,
    key: str,
    answer: str,
    expected: int,
    author: str,
) -> int:
    return _change(
        project,
        engine,
        conn,
        author,
        "redteam.attack",
        lambda ws: ws.add_attack(key, answer, expected, f"by {author}"),
        lambda number: f"ID {key}: attack {number}",
    )


def revise(
    project: Project,
    engine: RedTeam | None,
    conn: sqlite3.Connection,
    key: str,
    rule: str,
    note: str,
    author: str,
) -> RedTeamRecord:
    return _change(
        project,
        engine,
        conn,
        author,
        "redteam.revise",
        lambda ws: ws.revise(key, rule, f"{note} (by {author})".strip()),
        lambda version: f"ID {key}: v{version['version']}",
    )


def check(
    project: Project,
    engine: RedTeam | None,
    conn: sqlite3.Connection,
    key: str,
    judge: ModelChoice | None,
    author: str,
) -> RedTeamRecord:
    """One round with the app's judge (a ModelChoice) on every attack of the instance."""
    if judge is None:
        raise ConfigError("no judge: start the app with `annotate serve ... --judge SPEC`")
    return _change(
        project,
        engine,
        conn,
        author,
        "redteam.check",
        lambda ws: engine.check(ws, key, judge),  # type: ignore[union-attr]  # workspace() refuses None
        lambda round_: f"ID {key}: round {round_['round']} {round_['successful_attacks']}",
    )


def history(
    project: Project, engine: RedTeam | None, key: str, conn: sqlite3.Connection
) -> dict[str, object]:
    """An instance's versions, attacks and rounds (each with `by`, who made it, and `removed`,
    when that account was removed), with its status and current rule."""
    with LOCK:
        instance = workspace(project, engine, conn).instance(key)
    assert engine is not None  # workspace() refuses a project without one
    removed = {u.name: u.removed for u in auth.users(conn)}

    def made(record: RedTeamRecord, by: str | None) -> RedTeamRecord:
        return {**record, "by": by, "removed": removed.get(by or "")}

    checks = {
        found.group(2): r["author"]
        for r in conn.execute("SELECT author, detail FROM events WHERE action = 'redteam.check'")
        if (found := ROUND_EVENT.match(r["detail"])) and found.group(1) == key
    }
    return {
        **instance,
        "versions": [made(v, _author(VERSION_BY, v)) for v in _records(instance, "versions")],
        "attacks": [made(a, _author(ATTACK_BY, a)) for a in _records(instance, "attacks")],
        "rounds": [made(r, checks.get(str(r["round"]))) for r in _records(instance, "rounds")],
        "status": engine.status(instance),
        "rule": made(engine.current(instance), _author(VERSION_BY, engine.current(instance))),
    }


def _records(instance: RedTeamRecord, field: str) -> list[RedTeamRecord]:
    """An instance's list of records (versions, attacks, rounds), as the engine keeps them."""
    return cast(list[RedTeamRecord], instance[field])


def _author(pattern: re.Pattern[str], record: RedTeamRecord) -> str | None:
    """Who made `record`, from the note this module gave it (None: made elsewhere, e.g. by
    `vidbench rules` on the command line)."""
    note = record.get("note")
    found = pattern.fullmatch(note) if isinstance(note, str) else None
    return found.group(1) if found else None


def export(
    project: Project, engine: RedTeam, out: Path, author: str, conn: sqlite3.Connection
) -> Exported:
    revised = _change(
        project,
        engine,
        conn,
        author,
        "export.rules",
        lambda ws: engine.export(ws, out),
        lambda revised: f"{out}: {revised} revised",
    )
    return Exported(out, revised)
