"""What one `curate 4d qa` is asked to do: the data, the models and their options, the frames,
how many questions, the seed. Built by commands.py, read by the pipeline and the output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vidbench.benchmarks.fourd.curate.qa.candidates import SUBTASKS
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.media.spec import FrameSpec
from vidbench.models.registry import ModelChoice
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS


@dataclass
class QAConfig:
    data: Path
    out: Path
    generator: ModelChoice
    validator: ModelChoice
    blind: tuple[ModelChoice, ...]  # the two text-only models
    spec: FrameSpec = SPEC
    subtasks: tuple[str, ...] = tuple(SUBTASKS)
    questions: int = 2  # asked of the generator per object and subtask
    objects: int | None = None  # only the first N objects (by uid)
    attempts: int = DEFAULT_ATTEMPTS
    concurrency: int = 16
    seed: int = 0
    cache_dir: Path | None = None
    progress: bool = True
