"""The project's AutoEval-Video red-team workspace (PROJECT/redteam/, the format of
benchmarks/autoeval_video/redteam.py) driven from the browser: the engine is reused as is; this
module only serialises access (one writer at a time) and logs each action with its author."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from vidbench.annotate import db
from vidbench.annotate.exported import Exported
from vidbench.annotate.project import Project
from vidbench.benchmarks.autoeval_video import redteam
from vidbench.core.errors import ConfigError

LOCK = threading.Lock()  # the workspace is one JSON file: one change at a time


def workspace(project: Project, conn: sqlite3.Connection) -> redteam.Workspace:
    if (project.redteam / redteam.FILENAME).is_file():
        return redteam.Workspace.open(project.redteam)
    found = conn.execute("SELECT source FROM items WHERE kind = 'rule' LIMIT 1").fetchone()
    if found is None:
        raise ConfigError("this project has no AutoEval-Video rules to red-team")
    return redteam.Workspace.init(project.redteam, Path(found["source"]))


def attack(
    project: Project, conn: sqlite3.Connection, key: str, answer: str, expected: int, author: str
) -> int:
    with LOCK:
        number = workspace(project, conn).add_attack(key, answer, expected, f"by {author}")
    with db.transaction(conn):
        db.log_event(conn, author, "redteam.attack", f"ID {key}: attack {number}")
    return number


def revise(
    project: Project, conn: sqlite3.Connection, key: str, rule: str, note: str, author: str
) -> dict[str, Any]:
    with LOCK:
        version = workspace(project, conn).revise(key, rule, f"{note} (by {author})".strip())
    with db.transaction(conn):
        db.log_event(conn, author, "redteam.revise", f"ID {key}: v{version['version']}")
    return version


def check(
    project: Project, conn: sqlite3.Connection, key: str, judge: Any, author: str
) -> dict[str, Any]:
    """One round with the app's judge (a ModelChoice) on every attack of the instance."""
    from vidbench.benchmarks.autoeval_video import rules
    from vidbench.benchmarks.autoeval_video.redteam_check import check as run_check

    if judge is None:
        raise ConfigError("no judge: start the app with `annotate serve ... --judge SPEC`")
    protocol = rules.get_protocol(rules.DEFAULT_PROTOCOL)
    with LOCK:
        round_ = run_check(workspace(project, conn), key, judge, protocol)
    with db.transaction(conn):
        won = round_["successful_attacks"]
        db.log_event(conn, author, "redteam.check", f"ID {key}: round {round_['round']} {won}")
    return round_


def export(project: Project, out: Path, author: str, conn: sqlite3.Connection) -> Exported:
    with LOCK:
        revised = redteam.export_rules(workspace(project, conn), out)
    with db.transaction(conn):
        db.log_event(conn, author, "export.rules", f"{out}: {revised} revised")
    return Exported(out, revised)
