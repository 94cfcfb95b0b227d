"""A run's configuration: what `vidbench run` was asked, saved as run.json so the judge, score
and report stages of a stored run need nothing else."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vidbench.core.files import Json
from vidbench.registry import get_task, stored_task_name
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import RunFile
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS
from vidbench.tasks.base import Task

# where and how a run ran, no part of what it evaluated: left out of run.json (the rest are
# report/schema.RunFile's fields: tests/runner/test_results_schema.py checks they agree)
RUN_PLACE = ("progress", "ray", "ray_workers", "ray_rate", "fresh")


@dataclass
class RunConfig:
    task: str
    data: str
    model: str
    out: str
    seed: int = 0
    limit: int | None = None
    concurrency: int = 16
    frames: dict[str, Json] = field(default_factory=dict)  # FrameSpec overrides from the CLI
    generation: dict[str, Json] = field(default_factory=dict)  # temperature, top_p, max_tokens
    model_options: dict[str, str] = field(default_factory=dict)  # backend-specific --model-opt
    judge: str | None = None  # model spec of the LLM judge, for tasks that need one
    judge_options: dict[str, str] = field(default_factory=dict)
    judge_attempts: int = DEFAULT_ATTEMPTS  # tries per judgment whose reply does not parse
    cache_dir: str | None = None
    progress: bool = True
    # Ray scale-out (runner/ray/driver.py): None runs here; "local" starts a Ray cluster on this
    # machine, "auto" joins the running one, anything else is a cluster address.
    ray: str | None = None
    ray_workers: int = 2
    ray_rate: float | None = None  # API models on Ray: calls started per second, all workers
    fresh: bool = False  # start over in the results folder (`--fresh`: runner/data_identity.py)
    # What the answers and verdicts are keyed by, stored by the infer and judge stages so the
    # score and report stages need neither the model nor its key (None: ask the backend).
    model_identity: Mapping[str, Json] | None = None
    judge_identity: Mapping[str, Json] | None = None

    @property
    def results_dir(self) -> Path:
        return Path(self.out)

    def save(self) -> None:
        saved = {k: v for k, v in asdict(self).items() if k not in RUN_PLACE}
        ResultsDir(self.results_dir).write_config(RunFile.model_validate(saved))

    def frame_overrides(self) -> dict[str, Json]:
        """The FrameSpec fields this run overrides (views as a tuple, as FrameSpec keeps them)."""
        overrides = dict(self.frames)
        views = overrides.get("views")
        if isinstance(views, Sequence):
            overrides["views"] = tuple(views)
        return overrides

    def open_task(self) -> Task:
        """The task this run evaluates (the registry builds it from its name), with its frame
        and generation overrides; the task name becomes the one run.json keeps (a declared
        benchmark's folder made absolute: registry.stored_task_name)."""
        self.task = stored_task_name(self.task)
        return get_task(self.task, self.generation, **self.frame_overrides())

    @classmethod
    def load(cls, results_dir: Path) -> RunConfig:
        """The run stored in `results_dir`: that directory is the run, wherever it was made (a
        moved or copied directory is read and written where it is now, never where run.json
        says it was)."""
        saved = ResultsDir(Path(results_dir)).read_config().model_dump(exclude={"schema_version"})
        return cls(**{**saved, "out": str(results_dir)})
