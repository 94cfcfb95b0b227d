"""The `curate 4d` funnel: how many assets entered and left each stage (render, motion,
quality), and why each dropped one was dropped, with its uid and file. Every stage merges its
counts into OUT/funnel.json as it ends; `vidbench curate 4d funnel DIR` prints the table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.table import Table

from vidbench.benchmarks.fourd.curate.manifest import Problem
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_json

FUNNEL_FILE = "funnel.json"
STAGES = ("render", "motion", "quality")


@dataclass(frozen=True)
class StageCount:
    """One stage: assets in, assets kept, dropped per reason, and each dropped asset."""

    entered: int
    kept: int
    dropped: dict[str, int]
    problems: list[dict]

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
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ConfigError(f"{path}: not a funnel file ({e})") from None


def record_stage(folder: Path, stage: str, count: StageCount) -> Path:
    """Merge one stage's counts into FOLDER/funnel.json (stages kept in pipeline order)."""
    stages = load_funnel(folder)
    stages[stage] = asdict(count)
    ordered = {s: stages[s] for s in (*STAGES, *sorted(stages)) if s in stages}
    path = Path(folder) / FUNNEL_FILE
    write_json(path, {"stages": ordered}, indent=1)
    return path


def funnel_table(stages: dict[str, dict]) -> Table:
    """entered / kept / dropped (per reason) of every stage."""
    table = Table(title="curate 4d funnel")
    for column in ("stage", "entered", "kept", "dropped", "why"):
        table.add_column(
            column, justify="right" if column in ("entered", "kept", "dropped") else "left"
        )
    for stage, count in stages.items():
        dropped = sum(count["dropped"].values())
        why = ", ".join(f"{reason} {n}" for reason, n in count["dropped"].items())
        table.add_row(stage, str(count["entered"]), str(count["kept"]), str(dropped), why or "-")
    return table
