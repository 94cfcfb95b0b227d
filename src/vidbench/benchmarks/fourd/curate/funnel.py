"""The `curate 4d` funnel: how many assets entered and left each stage (render, motion,
quality), and why each dropped one was dropped, with its uid and file. Every stage merges its
counts into OUT/funnel.json as it ends; `vidbench curate 4d funnel DIR` prints the table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.table import Table

from vidbench.benchmarks.fourd.curate.manifest import Problem
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_json

FUNNEL_FILE = "funnel.json"
STAGES = ("render", "motion", "quality")


@dataclass(frozen=True)
class StageCount:
    """One stage: things in, things kept, dropped per reason, and each dropped one. `unit` is
    what the stage counts (objects; the qa stage counts questions); `uncounted` holds what went
    wrong before there was anything to count (e.g. generator replies no question was read from);
    `pending`: entered but not finished (the run was interrupted; a rerun does them)."""

    entered: int
    kept: int
    dropped: dict[str, int]
    problems: list[dict]
    unit: str = "objects"
    uncounted: dict[str, int] = field(default_factory=dict)
    pending: int = 0

    @classmethod
    def of(cls, entered: int, kept: int, problems: Sequence[Problem]) -> StageCount:
        reasons = Counter(p.reason for p in problems)
        return cls(entered, kept, dict(sorted(reasons.items())), [p.to_json() for p in problems])


def load_funnel(folder: Path) -> dict[str, dict]:
    """The stages recorded in FOLDER/funnel.json (empty when none ran there yet)."""
    path = Path(folder) / FUNNEL_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))["stages"]
    except (ValueError, KeyError, TypeError) as e:  # not UTF-8, not JSON, not ours
        raise ConfigError(f"{path}: not a funnel file ({e})") from None


def record_stage(folder: Path, stage: str, count: StageCount) -> Path:
    """Merge one stage's counts into FOLDER/funnel.json (stages kept in pipeline order)."""
    stages = load_funnel(folder)
    stages[stage] = asdict(count)
    ordered = {s: stages[s] for s in (*STAGES, *sorted(stages)) if s in stages}
    path = Path(folder) / FUNNEL_FILE
    write_json(path, {"stages": ordered}, indent=1)
    return path


def read_funnel(folder: Path) -> dict[str, dict]:
    """The stages of FOLDER/funnel.json for `curate 4d funnel`: a folder that is not there, or
    where no stage has run, is an error naming it (not an empty table)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such folder")
    stages = load_funnel(folder)
    if not stages:
        raise ConfigError(
            f"{folder}: no {FUNNEL_FILE} (no stage has run here): give the --out folder of "
            "`curate 4d render`, `motion`, `quality` or `qa`"
        )
    return stages


def funnel_table(stages: dict[str, dict]) -> Table:
    """entered / kept / dropped (per reason) of every stage, each in its own unit."""
    table = Table(title="curate 4d funnel")
    for column in ("stage", "counts", "entered", "kept", "dropped", "why"):
        table.add_column(
            column, justify="right" if column in ("entered", "kept", "dropped") else "left"
        )
    for stage, count in stages.items():
        dropped = sum(count["dropped"].values())
        why = ", ".join(f"{reason} {n}" for reason, n in count["dropped"].items())
        uncounted = count.get("uncounted") or {}
        notes = [why] if why else []
        if uncounted:
            notes.append("not counted: " + ", ".join(f"{k} {n}" for k, n in uncounted.items()))
        if count.get("pending"):
            notes.append(f"not done yet {count['pending']} (interrupted: run it again)")
        why = "; ".join(notes)
        table.add_row(
            stage,
            count.get("unit", "objects"),
            str(count["entered"]),
            str(count["kept"]),
            str(dropped),
            why or "-",
        )
    return table
