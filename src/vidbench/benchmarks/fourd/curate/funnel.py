"""The `curate 4d` funnel (report/funnel.py's shape): how many assets entered and left each stage
(render, motion, quality, then qa: the objects it used, then their questions), and why each dropped
one was dropped, with its uid and file. Every stage merges its counts into OUT/funnel.json as it
ends; `vidbench curate 4d funnel DIR` prints the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.core.errors import ConfigError
from vidbench.report.funnel import (
    FUNNEL_FILE,
    Funnel,
    StageCount,
    record_stage,
    refuse_other_pipeline,
)

STAGES = ("render", "motion", "quality", "qa objects", "qa")
QA_STAGES = ("qa objects", "qa")  # written by `curate 4d qa` (qa/funnel.py)


def stage_count(entered: int, kept: int, problems: Sequence[AssetProblem]) -> StageCount:
    """A stage over objects: the dropped ones counted by reason and each named."""
    reasons = Counter(p.reason for p in problems)
    return StageCount(entered, kept, dict(sorted(reasons.items())), [p.to_json() for p in problems])


def refuse_other(folder: Path, command: str) -> None:
    """ConfigError when FOLDER/funnel.json is another pipeline's (`curate mmworld`'s)."""
    refuse_other_pipeline(folder, STAGES, command)


def record(folder: Path, stage: str, count: StageCount) -> Path:
    """Merge one stage's counts into FOLDER/funnel.json (stages in pipeline order)."""
    return record_stage(folder, stage, count, STAGES)


def read_funnel(folder: Path) -> Funnel:
    """FOLDER/funnel.json for `curate 4d funnel`: a folder that is not there, or where no stage
    has run, is an error naming it (not an empty table)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such folder")
    funnel = Funnel.read(folder)
    if not funnel.stages:
        raise ConfigError(
            f"{folder}: no {FUNNEL_FILE} (no stage has run here): give the --out folder of "
            "`curate 4d render`, `motion`, `quality` or `qa`"
        )
    return funnel
