"""A project's red-team workspace (PROJECT/redteam/) driven from the browser: the benchmark's
engine (its ReviewAdapter's `red_team`, e.g. AutoEval-Video's) is used as it is; this module only
serialises access (one writer at a time) and logs each action with its author."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from vidbench.annotate import db
from vidbench.annotate.adapters import RedTeam, RedTeamRecord, RuleWorkspace
from vidbench.annotate.items import Exported
from vidbench.annotate.project import Project
from vidbench.core.errors import ConfigError
from vidbench.models.registry import ModelChoice

LOCK = threading.Lock()  # the workspace is one JSON file: one change at a time
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
    """An instance's versions, attacks and rounds, with its status and current rule."""
    with LOCK:
        instance = workspace(project, engine, conn).instance(key)
    assert engine is not None  # workspace() refuses a project without one
    return {**instance, "status": engine.status(instance), "rule": engine.current(instance)}


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
