"""One evaluation run: the `infer`, `score` and `report` stages over a results directory.

RESULTS_DIR/
  run.json        the configuration (so `score` and `report` can run alone)
  store.sqlite    every model answer and failure (runner/store.py)
  samples.jsonl   per-sample records (score stage)
  usage.json      requests answered and tokens in/out (score stage)
  results.json    the table's columns, intervals, errors, provenance (report stage)
  table.md, table.csv
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from vidbench.core.errors import ConfigError
from vidbench.media.cache import FrameCache
from vidbench.media.spec import parse_views
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model
from vidbench.report.results import build_results
from vidbench.report.tables import print_table, to_csv, to_markdown
from vidbench.runner.infer import InferStats, infer
from vidbench.runner.keys import plan_key
from vidbench.runner.score import read_jsonl, score_samples, write_jsonl
from vidbench.runner.store import Store
from vidbench.tasks.base import Task
from vidbench.tasks.registry import get_task

STAGES = ("infer", "score", "report")


@dataclass
class RunConfig:
    task: str
    data: str
    model: str
    out: str
    seed: int = 0
    limit: int | None = None
    concurrency: int = 16
    frames: dict[str, Any] = field(default_factory=dict)  # FrameSpec overrides from the CLI
    generation: dict[str, Any] = field(default_factory=dict)  # temperature, top_p, max_tokens, seed
    model_options: dict[str, str] = field(default_factory=dict)  # backend-specific --model-opt
    cache_dir: str | None = None
    progress: bool = True

    @property
    def results_dir(self) -> Path:
        return Path(self.out)

    def save(self) -> None:
        self.results_dir.mkdir(parents=True, exist_ok=True)
        saved = {k: v for k, v in asdict(self).items() if k != "progress"}
        (self.results_dir / "run.json").write_text(json.dumps(saved, indent=2) + "\n")

    @classmethod
    def load(cls, results_dir: Path) -> RunConfig:
        path = Path(results_dir) / "run.json"
        if not path.is_file():
            raise ConfigError(f"{results_dir}: no run.json; run the infer stage first")
        return cls(**json.loads(path.read_text()))


def frame_overrides(
    views: str | None = None,
    frames: int | None = None,
    sampler: str | None = None,
    order: str | None = None,
    timestamps: bool | None = None,
    max_side: int | None = None,
) -> dict[str, Any]:
    """CLI frame options -> FrameSpec field overrides (absent options are left out)."""
    chosen = {
        "views": list(parse_views(views)) if views else None,
        "frames": frames,
        "sampler": sampler,
        "order": order,
        "timestamps": timestamps or None,
        "max_side": max_side,
    }
    return {k: v for k, v in chosen.items() if v is not None}


class Run:
    """A configured run: its task, model, store and plan key."""

    def __init__(self, config: RunConfig, console: Console | None = None) -> None:
        self.config = config
        self.console = console or Console(stderr=True)
        overrides = dict(config.frames)
        if "views" in overrides:
            overrides["views"] = tuple(overrides["views"])
        self.task: Task = get_task(config.task, config.generation, **overrides)
        self.model: Model = load_model(
            config.model,
            ModelOptions(config.seed, config.concurrency, dict(config.model_options)),
        )
        self.plan = plan_key(self.task.settings(), self.model.identity())
        loaded = self.task.load(Path(config.data))
        self.samples = loaded.items[: config.limit] if config.limit else loaded.items
        self.problems = loaded.problems
        for problem in self.problems:
            self.console.print(f"[yellow]skipped[/] {escape(str(problem))}")

    def infer(self) -> InferStats:
        self.config.save()
        store = Store(self.config.results_dir)
        try:
            run_id = store.start_run(self.plan, asdict(self.config))
            cache = FrameCache(Path(self.config.cache_dir) if self.config.cache_dir else None)
            stats = asyncio.run(self._infer(store, run_id, cache))
        finally:
            store.close()
        self.console.print(
            f"infer: {stats.answered} answered, {stats.reused} reused from the store, "
            f"{stats.failed} failed"
        )
        return stats

    async def _infer(self, store: Store, run_id: int, cache: FrameCache) -> InferStats:
        try:
            return await infer(
                self.task,
                self.model,
                self.samples,
                store,
                self.plan,
                run_id,
                cache,
                self.config.concurrency,
                self.config.progress,
            )
        finally:
            await self.model.aclose()

    def score(self) -> list[dict[str, Any]]:
        store = Store(self.config.results_dir)
        try:
            records = score_samples(self.task, self.samples, self.problems, store, self.plan)
            usage = store.usage(self.plan)
        finally:
            store.close()
        write_jsonl(self.config.results_dir / "samples.jsonl", records)
        (self.config.results_dir / "usage.json").write_text(json.dumps(usage, indent=2) + "\n")
        return records

    def report(self, print_to: Console | None = None) -> dict[str, Any]:
        path = self.config.results_dir / "samples.jsonl"
        if not path.is_file():
            raise ConfigError(f"{path} is missing; run the score stage first")
        results = build_results(
            self.task,
            self.model.identity(),
            read_jsonl(path),
            extra={
                "data": self.config.data,
                "seed": self.config.seed,
                "plan": self.plan,
                "usage": json.loads((self.config.results_dir / "usage.json").read_text()),
            },
            seed=self.config.seed,
        )
        out = self.config.results_dir
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        (out / "table.md").write_text(to_markdown([results]))
        (out / "table.csv").write_text(to_csv([results]))
        if print_to is not None:
            print_table([results], f"{self.task.name} — {self.config.data}", print_to)
        if results["errors"]:
            self.console.print(
                f"[red]{results['errors']} error(s)[/]: see error_details in {out / 'results.json'}"
            )
        return results

    def run(self, stages: tuple[str, ...] = STAGES, print_to: Console | None = None) -> None:
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ConfigError(f"unknown stages {sorted(unknown)}; choose from {', '.join(STAGES)}")
        if "infer" in stages:
            self.infer()
        if "score" in stages:
            self.score()
        if "report" in stages:
            self.report(print_to)
