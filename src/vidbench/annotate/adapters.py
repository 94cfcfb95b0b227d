"""What a benchmark tells the review app: how its items come in, how people's work goes back out
as its data, which video links its own tools make, how its rules are red-teamed, and how the
decisions on the items an audit flagged go back into its data.

The app knows items, work and people; the kinds of item are its own (`qa`: a candidate to
review, `caption`: an object to caption, `answer`: a question for a human baseline, `rule`: a
judging rule to red-team, `audit`: an item an audit flagged, to keep, fix or drop). Each
benchmark's `ReviewAdapter` (a part of its Benchmark value) names its importers and exporters;
`registered_adapters()` gathers the registered benchmarks' ones for the app as `Adapters`, and
nothing in annotate/ imports a benchmark.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import JsonValue

from vidbench.annotate.items import Exported, Imported
from vidbench.annotate.project import Project
from vidbench.benchmark import BenchmarkPart
from vidbench.core.errors import ConfigError, DataError
from vidbench.models.registry import ModelChoice

# read(conn, project data folder, the file or folder to read, author) -> what was imported
ImportFn = Callable[[sqlite3.Connection, Path, Path, str], Imported]
# write(project, conn, the exports folder, author) -> what was written and what was left out
ExportFn = Callable[[Project, sqlite3.Connection, Path, str], Exported]


@dataclass(frozen=True)
class Importer:
    """`annotate import PROJECT NAME [FILE]`; `finds(data)` lists what of a data folder it reads
    (for `annotate init` and `annotate import PROJECT folder`), [] when nothing."""

    name: str
    read: ImportFn
    finds: Callable[[Path], list[Path]]


@dataclass(frozen=True)
class Exporter:
    """`annotate export PROJECT NAME`: one official file (or folder) made from people's work."""

    name: str
    write: ExportFn


# An instance's red-team history, a rule version, a round: JSON objects of the benchmark's own
# shape (the app shows them and hands them back to the benchmark's RedTeam, never reads inside).
RedTeamRecord = Mapping[str, object]


class RuleWorkspace(Protocol):
    """A benchmark's red-team workspace for its judging rules (one JSON file in a folder)."""

    def add_attack(self, key: str, answer: str, expected: int, note: str) -> int: ...

    def revise(self, key: str, rule: str, note: str) -> RedTeamRecord: ...

    def instance(self, key: str) -> RedTeamRecord: ...


@dataclass(frozen=True)
class RedTeam:
    """How a benchmark's rules are red-teamed: its workspace (opened from a folder, made from
    the rules file the items came from), an instance's status and current rule, a round of its
    judge on every attack, and the rules file written back."""

    open: Callable[[Path, Path | None], RuleWorkspace]  # (folder, rules file when new)
    status: Callable[[RedTeamRecord], str]  # an instance's status
    current: Callable[[RedTeamRecord], RedTeamRecord]  # an instance's current rule version
    # (workspace, key, judge) -> the round
    check: Callable[[RuleWorkspace, str, ModelChoice], RedTeamRecord]
    export: Callable[[RuleWorkspace, Path], int]  # (workspace, rules file to write) -> revised
    workspace_file: str  # the workspace's file name in its folder


@dataclass(frozen=True)
class Audited:
    """One of a benchmark's items as the audit queue shows it (annotate/audit_queue.py)."""

    id: str
    question: str
    options: tuple[str, ...]  # the option texts, in letter order; () for an open-ended item
    gold: str | None  # the gold letter; None for an open-ended item
    references: tuple[str, ...] = ()  # an open-ended item's accepted answers
    videos: tuple[str, ...] = ()  # relative to the project's data folder
    first_views: tuple[int, ...] = ()  # the videos shown first (the official views); (): all
    subject: str | None = None  # the object (a 4D-Bench uid), or None: its first video
    task: str | None = None  # its subtask or group, for its title


@dataclass(frozen=True)
class Decision:
    """What a reviewer decided on an audited item (the audit queue's export)."""

    id: str  # the benchmark's item id
    decision: str  # keep | fix | drop
    gold: str | None  # fix: the gold letter chosen
    reason: str  # why (a drop needs one)
    flags: tuple[str, ...]  # the flag kinds the reviewer saw
    by: str
    at: str


@dataclass(frozen=True)
class AuditFixer:
    """How the decisions on an audit's flagged items reach a benchmark's data: `takes` the
    audited task names that are this benchmark's (audit.json's summary.task), `items` reads its
    items from a project's data folder (data folder, audited task -> id -> Audited; ConfigError
    when the folder is not the audited benchmark's), and `write` makes the fixed data from the
    decisions (data folder, decisions, the project's exports folder) -> what was written;
    `what` names the audits it takes, for the error that refuses the others."""

    what: str  # e.g. "declared benchmarks (custom:DIR)"
    takes: Callable[[str], bool]
    items: Callable[[Path, str], dict[str, Audited]]
    write: Callable[[Path, Sequence[Decision], Path], Exported]


@dataclass(frozen=True)
class ReviewAdapter(BenchmarkPart):
    """A benchmark part: its items in the review app, and how people's work comes back out."""

    benchmark: str  # the name its `answer` items carry, e.g. "4dbench"
    importers: tuple[Importer, ...] = ()
    exporters: tuple[Exporter, ...] = ()
    # link -> the folder the benchmark's own tools recorded for it (None: not one of theirs)
    link_target: Callable[[Path], Path | None] | None = None
    red_team: RedTeam | None = None
    # a reviewer's edited `qa` record -> the record as the benchmark keeps it (DataError if not)
    check_edit: Callable[[Any], Any] | None = None
    audit: AuditFixer | None = None  # its audits' flagged items, and the decisions written back


Named = TypeVar("Named", Importer, Exporter)


def _named(found: Sequence[Named], name: str, what: str, also_known: Sequence[str] = ()) -> Named:
    """The one of `found` called `name`; else a ConfigError naming every one known."""
    for one in found:
        if one.name == name:
            return one
    known = ", ".join([*also_known, *(one.name for one in found)])
    raise ConfigError(f"no {what} {name!r}; known: {known}")


@dataclass(frozen=True)
class Adapters:
    """The registered benchmarks' review adapters, looked up by what the app needs."""

    each: Sequence[ReviewAdapter] = ()

    def importers(self) -> list[Importer]:
        return [importer for adapter in self.each for importer in adapter.importers]

    def importer(self, name: str) -> Importer:
        return _named(self.importers(), name, "importer")

    def exporters(self) -> list[Exporter]:
        return [exporter for adapter in self.each for exporter in adapter.exporters]

    def exporter(self, name: str) -> Exporter:
        # `answers` and `audit` are the app's own exports, besides the benchmarks'
        return _named(self.exporters(), name, "export", also_known=("answers", "audit"))

    def benchmarks(self) -> list[str]:
        return [adapter.benchmark for adapter in self.each]

    def link_target(self, link: Path) -> Path | None:
        """The folder one of the benchmarks' tools recorded for `link`, or None."""
        for adapter in self.each:
            if adapter.link_target is not None and (target := adapter.link_target(link)):
                return target
        return None

    def check_edit(self, item: dict[str, JsonValue], edited: Any) -> Any:
        """An edited record checked by the benchmark its item came from (`benchmark` in the
        item's data; items without one: the benchmark that checks edits)."""
        name = item.get("benchmark")
        for adapter in self.each:
            if adapter.check_edit is not None and name in (None, adapter.benchmark):
                return adapter.check_edit(edited)
        raise DataError(f"no benchmark here checks an edited {name or 'qa'} record")

    def audit_fixer(self, task: str) -> tuple[str, AuditFixer]:
        """The benchmark whose data an audit of `task` read, and how it takes the decisions;
        ConfigError naming the benchmarks that take audits."""
        for adapter in self.each:
            if adapter.audit is not None and adapter.audit.takes(task):
                return adapter.benchmark, adapter.audit
        known = "; ".join(a.audit.what for a in self.each if a.audit is not None) or "none"
        raise ConfigError(
            f"an audit of {task!r}: the audit queue cannot write decisions back to this "
            f"benchmark's data; it takes audits of: {known}"
        )

    @property
    def red_team(self) -> RedTeam | None:
        return next((a.red_team for a in self.each if a.red_team is not None), None)


def registered_adapters() -> Adapters:
    """The registered benchmarks' review adapters (vidbench/registry.py)."""
    from vidbench.registry import parts

    return Adapters(parts(ReviewAdapter))
