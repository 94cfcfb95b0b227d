"""`vidbench sweep`: a grid of tasks x variants x models, one results directory per run, then
the combined tables (report/combine.py).

OUT/<task>/<model-slug>/ is an ordinary results directory (its own store: rerunning the sweep
resumes every run); OUT/table.md, table.csv and table.tex put them side by side (one set per task
and data when the tasks differ). With `ray`, one Ray session serves every run in turn, each
sharded over all its workers (runner/ray/driver.py).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console

from vidbench.core.errors import ConfigError
from vidbench.report.schema import Results
from vidbench.runner.run import Run, RunOutcome
from vidbench.runner.run_config import RunConfig


@dataclass(frozen=True)
class Sweep:
    tasks: tuple[str, ...]
    models: tuple[str, ...]
    out: str
    data: dict[str, str]  # task name (without variants) -> data folder; "*": any task
    variants: tuple[str, ...] = ()  # each appended to each task: TASK:VARIANT
    base: RunConfig | None = None  # settings every run shares (seed, limit, concurrency, ray...)
    model_options: dict[str, dict[str, str]] = field(default_factory=dict)  # per model spec
    parallel: int = 1  # runs at once (threads; each its own driver on the shared Ray session)

    def task_names(self) -> list[str]:
        if not self.variants:
            return list(self.tasks)
        return [f"{task}:{variant}" for task in self.tasks for variant in self.variants]

    def data_for(self, task: str) -> str:
        name = task.partition(":")[0]
        folder = self.data.get(name) or self.data.get("*")
        if folder is None:
            raise ConfigError(f"sweep: no data folder for {name} (give data.{name} or --data)")
        return folder


def slug(text: str) -> str:
    """A folder name for a task or model spec (`openai:gpt-4o` -> `openai-gpt-4o`)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-") or "x"


def run_configs(sweep: Sweep) -> list[RunConfig]:
    base = sweep.base or RunConfig(task="", data="", model="", out="")
    configs = []
    for task in sweep.task_names():
        for model in sweep.models:
            configs.append(
                replace(
                    base,
                    task=task,
                    data=sweep.data_for(task),
                    model=model,
                    out=str(Path(sweep.out) / slug(task) / slug(model)),
                    model_options={**base.model_options, **sweep.model_options.get(model, {})},
                )
            )
    return configs


def load_sweep(path: Path, base: RunConfig) -> Sweep:
    """A sweep file (TOML): tasks, models, out, data (a folder, or a table by task), variants,
    and run settings (seed, limit, concurrency, cache_dir, ray, ray_workers, ray_rate), per-model
    options in [model_options."SPEC"]."""
    try:
        raw: dict[str, object] = tomllib.loads(path.read_text())
    except (OSError, ValueError) as e:  # unreadable, not UTF-8, not TOML
        raise ConfigError(f"{path}: not a readable sweep file ({e})") from e
    settings = set(SweepSettings.model_fields)
    sweep_keys = {"tasks", "models", "out", "data", "variants", "model_options", "parallel"}
    unknown = set(raw) - sweep_keys - settings
    if unknown:
        raise ConfigError(f"{path}: unknown keys {sorted(unknown)}")
    for key in ("tasks", "models", "out", "data"):
        if key not in raw:
            raise ConfigError(f"{path}: give {key!r}")
    data = raw["data"] if isinstance(raw["data"], dict) else {"*": raw["data"]}
    options = raw.get("model_options", {})
    if not isinstance(options, dict) or not all(isinstance(o, dict) for o in options.values()):
        raise ConfigError(f"{path}: model_options must be tables of options by model spec")
    parallel = raw.get("parallel", 1)
    if not isinstance(parallel, int):
        raise ConfigError(f"{path}: parallel must be a whole number, got {parallel!r}")
    try:
        given = SweepSettings.model_validate({k: v for k, v in raw.items() if k in settings})
    except ValidationError as e:
        raise ConfigError(f"{path}: {e}") from None
    return Sweep(
        tasks=_names(path, raw, "tasks"),
        models=_names(path, raw, "models"),
        out=str(raw["out"]),
        data={str(k): str(v) for k, v in data.items()},
        variants=_names(path, raw, "variants"),
        base=replace(base, **given.model_dump(exclude_unset=True)),
        model_options={str(m): {str(k): str(v) for k, v in o.items()} for m, o in options.items()},
        parallel=parallel,
    )


class SweepSettings(BaseModel):
    """The run settings a sweep file may give, each of RunConfig's type (only those given
    replace the base run's: the defaults here are never used)."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = None
    limit: int | None = None
    concurrency: int | None = None
    cache_dir: str | None = None
    progress: bool | None = None
    ray: str | None = None
    ray_workers: int | None = None
    ray_rate: float | None = None


def _names(path: Path, raw: Mapping[str, object], key: str) -> tuple[str, ...]:
    """A list of names (tasks, models, variants); none when the key is absent."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: {key} must be a list of names, got {value!r}")
    return tuple(value)


def run_sweep(
    sweep: Sweep, console: Console, print_to: Console | None = None
) -> tuple[list[Results], RunOutcome]:
    """Every run of the grid through all stages, then the combined tables in OUT; and what the
    runs left undone, together."""
    from vidbench.report.combine import combine

    configs = run_configs(sweep)
    if sweep.parallel > 1:  # one live progress display at a time: none for runs side by side
        configs = [replace(c, progress=False) for c in configs]
    runs = [Run(config, console=console) for config in configs]  # bad names stop here
    address = configs[0].ray if configs else None

    outcomes: list[RunOutcome] = []

    def one(i: int, run: Run) -> None:
        console.print(f"[bold]sweep {i}/{len(runs)}[/] {run.config.task} · {run.config.model}")
        outcomes.append(run.run())

    with _cluster(address, configs, sweep.parallel):
        if sweep.parallel <= 1:
            for i, run in enumerate(runs, start=1):
                one(i, run)
        else:
            with ThreadPoolExecutor(sweep.parallel) as pool:
                done = [pool.submit(one, i, run) for i, run in enumerate(runs, start=1)]
                for future in done:
                    future.result()  # the first failed run's error, once the others ended
    results = combine([Path(c.out) for c in configs], Path(sweep.out), print_to or console)
    return results, RunOutcome.merged(outcomes)


def _cluster(address: str | None, configs: Sequence[RunConfig], parallel: int) -> Any:
    """One Ray session for the whole sweep (each run's driver finds it initialised)."""
    from contextlib import nullcontext

    if address is None:
        return nullcontext()
    from vidbench.runner.ray.cluster import ray_cluster

    return ray_cluster(address, parallel * max(c.ray_workers for c in configs))
