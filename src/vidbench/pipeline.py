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
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from vidbench.core.errors import ConfigError
from vidbench.media.cache import FrameCache
from vidbench.media.spec import parse_views
from vidbench.models.base import Model
from vidbench.models.pricing import cost_of
from vidbench.models.registry import ModelOptions, load_model
from vidbench.report.results import build_results
from vidbench.report.tables import print_table, to_csv, to_markdown
from vidbench.runner.infer import InferStats, infer
from vidbench.runner.judging import DEFAULT_ATTEMPTS, judge_all
from vidbench.runner.keys import plan_key
from vidbench.runner.score import read_jsonl, score_samples, write_jsonl
from vidbench.runner.store import Store
from vidbench.scoring.judge import JudgeCall, Verdict
from vidbench.tasks.base import Task
from vidbench.tasks.registry import get_task

STAGES = ("infer", "judge", "score", "report")


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
    judge: str | None = None  # model spec of the LLM judge, for tasks that need one
    judge_options: dict[str, str] = field(default_factory=dict)
    judge_attempts: int = DEFAULT_ATTEMPTS  # tries per judgment whose reply does not parse
    cache_dir: str | None = None
    progress: bool = True

    @property
    def results_dir(self) -> Path:
        return Path(self.out)

    def save(self) -> None:
        self.results_dir.mkdir(parents=True, exist_ok=True)
        saved = {k: v for k, v in asdict(self).items() if k != "progress"}
        (self.results_dir / "run.json").write_text(json.dumps(saved, indent=2) + "\n")

    def make_task(self) -> Task:
        """The task this run evaluates, with its frame and generation overrides."""
        overrides = dict(self.frames)
        if "views" in overrides:
            overrides["views"] = tuple(overrides["views"])
        return get_task(self.task, self.generation, **overrides)

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
        self.task: Task = config.make_task()
        self.model: Model = load_model(
            config.model,
            ModelOptions(config.seed, config.concurrency, dict(config.model_options)),
        )
        self.judge: Model | None = None
        if config.judge:
            self.judge = load_model(
                config.judge,
                ModelOptions(config.seed, config.concurrency, dict(config.judge_options)),
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

    def _judge_calls(self, store: Store) -> list[JudgeCall]:
        responses = store.responses(self.plan)
        return [
            call
            for sample in self.samples
            if sample.id in responses
            for call in self.task.judge_calls(sample, responses[sample.id].text)
        ]

    def _check_judge_given(self) -> None:
        if self.task.uses_judge and not self.task.judge_optional and self.judge is None:
            raise ConfigError(f"{self.task.name} needs an LLM judge: give --judge SPEC")

    def _verdicts(self, store: Store, allow_calls: bool) -> dict[str, Verdict]:
        calls = self._judge_calls(store)
        if not calls:
            return {}
        if self.judge is None:
            if allow_calls:
                self._check_judge_given()
            return {}
        judge = self.judge

        async def go() -> dict[str, Verdict]:
            if allow_calls:
                await judge.start()
            try:
                return await judge_all(
                    judge,
                    calls,
                    store,
                    max_attempts=self.task.judge_attempts or self.config.judge_attempts,
                    concurrency=self.config.concurrency,
                    allow_calls=allow_calls,
                    show_progress=allow_calls and self.config.progress,
                )
            finally:
                await judge.aclose()

        return asyncio.run(go())

    def judge_stage(self) -> dict[str, Verdict]:
        """Ask the judge about every stored answer that needs one (stored verdicts are reused)."""
        self.config.save()  # later `score`/`report` stages read the judge from run.json
        store = Store(self.config.results_dir)
        try:
            verdicts = self._verdicts(store, allow_calls=True)
        finally:
            store.close()
        if verdicts:
            by_status = Counter(v.status for v in verdicts.values())
            self.console.print(
                "judge: " + ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
            )
        return verdicts

    def score(self) -> list[dict[str, Any]]:
        store = Store(self.config.results_dir)
        try:
            verdicts = self._verdicts(store, allow_calls=False)
            records = score_samples(
                self.task, self.samples, self.problems, store, self.plan, verdicts
            )
            usage = store.usage(self.plan)
            if self.judge is not None:
                usage["judge"] = store.judge_usage(self.judge.spec)
        finally:
            store.close()
        write_jsonl(self.config.results_dir / "samples.jsonl", records)
        (self.config.results_dir / "usage.json").write_text(json.dumps(usage, indent=2) + "\n")
        return records

    def report(self, print_to: Console | None = None) -> dict[str, Any]:
        path = self.config.results_dir / "samples.jsonl"
        if not path.is_file():
            raise ConfigError(f"{path} is missing; run the score stage first")
        usage = json.loads((self.config.results_dir / "usage.json").read_text())
        results = build_results(
            self.task,
            self.model.identity(),
            read_jsonl(path),
            extra={
                "data": self.config.data,
                "seed": self.config.seed,
                "plan": self.plan,
                "judge": None if self.judge is None else self.judge.identity(),
                "usage": usage,
                "cost": cost_of(self.model.spec, usage),  # None without a price table
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
                f"[red]{results['errors']} error(s)[/] ("
                + ", ".join(f"{n} {kind}" for kind, n in results["errors_by_status"].items())
                + f"): see error_details in {out / 'results.json'}"
            )
        return results

    def run(self, stages: tuple[str, ...] = STAGES, print_to: Console | None = None) -> None:
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ConfigError(f"unknown stages {sorted(unknown)}; choose from {', '.join(STAGES)}")
        if "judge" in stages:
            self._check_judge_given()  # before inference, not after it
        if "infer" in stages:
            self.infer()
        if "judge" in stages:
            self.judge_stage()
        if "score" in stages:
            self.score()
        if "report" in stages:
            self.report(print_to)
