"""AutoEval-Video in the review app: its instances, whose rules the red team attacks (a rule
item each), the red-team engine the app drives (benchmarks/autoeval_video/redteam.py's
workspace and redteam_check.py's rounds) and the rules file written back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.annotate import db, redteam_store
from vidbench.annotate.adapters import (
    Exporter,
    Importer,
    RedTeam,
    RedTeamRecord,
    ReviewAdapter,
    RuleWorkspace,
)
from vidbench.annotate.items import Exported, Imported, add_item
from vidbench.annotate.project import Project
from vidbench.benchmarks.autoeval_video import redteam
from vidbench.benchmarks.autoeval_video.loader import RULES_FILE
from vidbench.core.errors import ConfigError
from vidbench.models.registry import ModelChoice


def import_rules(conn: sqlite3.Connection, data: Path, rules_file: Path, author: str) -> Imported:
    """AutoEval-Video instances whose rules the red team attacks."""
    from vidbench.benchmarks.autoeval_video import loader as autoeval

    out = Imported()
    loaded = autoeval.load(rules_file)
    out.problems += [str(p) for p in loaded.problems]
    with db.transaction(conn):
        for sample in loaded.items:
            record = {"id": sample.id, "Question": sample.question, "Rule": sample.rules}
            add_item(conn, "rule", sample.id, record, str(rules_file), out)
        db.log_event(conn, author, "import.rules", f"{rules_file}: {out.added} added")
    return out


def _finds(data: Path) -> list[Path]:
    return [data / RULES_FILE] if (data / RULES_FILE).is_file() else []


def _open(folder: Path, rules_file: Path | None) -> RuleWorkspace:
    if (folder / redteam.FILENAME).is_file():
        return redteam.Workspace.open(folder)
    if rules_file is None:
        raise ConfigError("this project has no AutoEval-Video rules to red-team")
    return redteam.Workspace.init(folder, rules_file)


def _ours(workspace: RuleWorkspace) -> redteam.Workspace:
    """The workspace `_open` gave the app, handed back."""
    if not isinstance(workspace, redteam.Workspace):
        raise TypeError(f"not an AutoEval-Video red-team workspace: {workspace!r}")
    return workspace


def _check(workspace: RuleWorkspace, key: str, judge: ModelChoice) -> RedTeamRecord:
    from vidbench.benchmarks.autoeval_video import rules
    from vidbench.benchmarks.autoeval_video.redteam_check import check

    return check(_ours(workspace), key, judge, rules.get_protocol(rules.DEFAULT_PROTOCOL))


def _status(instance: RedTeamRecord) -> str:
    return redteam.status(redteam.HISTORY.validate_python(instance))


def _current(instance: RedTeamRecord) -> RedTeamRecord:
    return redteam.current(redteam.HISTORY.validate_python(instance))


def _export_rules(workspace: RuleWorkspace, out: Path) -> int:
    return redteam.export_rules(_ours(workspace), out)


RED_TEAM = RedTeam(
    open=_open,
    status=_status,
    current=_current,
    check=_check,
    export=_export_rules,
    workspace_file=redteam.FILENAME,
)


def _export(project: Project, conn: sqlite3.Connection, out: Path, author: str) -> Exported:
    return redteam_store.export(project, RED_TEAM, out / RULES_FILE, author, conn)


REVIEW = ReviewAdapter(
    benchmark="autoeval-video",
    importers=(Importer("rules", import_rules, _finds),),
    exporters=(Exporter("rules", _export),),
    red_team=RED_TEAM,
)
