"""`vidbench run`: from what the command was asked (a `RunRequest`) to finished runs.

A request either starts runs (TASK, --data and --model given, the infer stage included) or
continues the runs stored in --out (the judge, score and report stages read run.json): the
stored configuration is the run, a TASK given re-scores it under that variant (only when the
variant asks the model the same questions), a --judge judges it with that judge. `--runs N`
makes N runs with seeds SEED..SEED+N-1 and a mean ± std table (repeat.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from vidbench.console import err, out
from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.runner.repeat import check_layout, repeated_configs, run_dir, run_repeated
from vidbench.runner.run import STAGES, Run, RunOutcome
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store
from vidbench.tasks.data import OWN_DATA


@dataclass(frozen=True)
class RunRequest:
    """What `vidbench run` was asked, as typed values (runner/commands.py builds it)."""

    out: str
    task: str | None = None
    data: str | None = None
    model: str | None = None
    stage: str = "all"  # all, or one of STAGES
    runs: int = 1
    seed: int = 0
    limit: int | None = None
    concurrency: int = 16
    cache_dir: str | None = None
    ray: str | None = None
    ray_workers: int = 2
    ray_rate: float | None = None
    frames: dict[str, Json] = field(default_factory=dict)  # FrameSpec overrides (media/spec.py)
    generation: dict[str, Json] = field(default_factory=dict)  # temperature, top_p, ... given
    model_options: dict[str, str] = field(default_factory=dict)  # --model-opt, api_key_env
    judge: str | None = None
    judge_options: dict[str, str] = field(default_factory=dict)  # --judge-opt
    progress: bool = True
    fresh: bool = False  # start over in --out (runner/data_identity.py)

    @property
    def stages(self) -> tuple[str, ...]:
        return STAGES if self.stage == "all" else (self.stage,)


def launch(request: RunRequest, console: Console = err, print_to: Console = out) -> RunOutcome:
    """What `vidbench run` calls: run what the request asks; what the runs left undone (nothing:
    every sample scored; else errors, answers without a verdict): the results are written either
    way. `console` takes the progress and messages, `print_to` the results table."""
    if request.fresh and "infer" not in request.stages:
        raise ConfigError("--fresh starts a new run in --out: it needs the infer stage")
    check_layout(Path(request.out), request.runs)
    configs = _configs(request, console)
    runs = [Run(config, console=console) for config in configs]
    if request.runs > 1:  # OUT/run-1..N, then mean ± std in OUT
        outcomes = run_repeated(runs, Path(request.out), request.stages, print_to)
    else:
        outcomes = [runs[0].run(request.stages, print_to)]
    return RunOutcome.merged(outcomes)


def _configs(request: RunRequest, console: Console) -> list[RunConfig]:
    if "infer" not in request.stages and request.data is None and request.model is None:
        return _stored_configs(request, console)  # everything else from run.json
    if request.task is None or request.model is None or not _data_given(request):
        raise ConfigError(
            "vidbench run: give TASK, --data and --model to infer (--data may be left out for a "
            "task with data of its own, e.g. custom:DIR; the judge, score and report stages of a "
            "stored run need only --out)"
        )
    config = RunConfig(
        task=request.task,
        data=OWN_DATA if request.data is None else request.data,
        model=request.model,
        out=request.out,
        seed=request.seed,
        limit=request.limit,
        concurrency=request.concurrency,
        cache_dir=request.cache_dir,
        progress=request.progress,
        ray=request.ray,
        ray_workers=request.ray_workers,
        ray_rate=request.ray_rate,
        frames=dict(request.frames),
        generation=dict(request.generation),
        model_options=dict(request.model_options),
        judge=request.judge,
        judge_options=dict(request.judge_options),
        fresh=request.fresh,
    )
    return repeated_configs(config, request.runs) if request.runs > 1 else [config]


def _data_given(request: RunRequest) -> bool:
    """--data given, or the task brings its own (a declared benchmark's folder)."""
    if request.data is not None:
        return True
    if request.task is None:
        return False
    probe = RunConfig(task=request.task, data=OWN_DATA, model="", out=request.out)
    return probe.open_task().own_data is not None


def _asks_the_same(
    changed: RunConfig, stored: RunConfig, directory: Path, console: Console
) -> bool:
    """Whether `changed` asks the model what the stored run asked: the same plan, or, when the
    stored task can no longer be built (a declared benchmark whose folder moved), a plan with
    answers in the store."""
    plan = Run(changed, console=console).plan
    try:
        return plan == Run(stored).plan
    except ConfigError:
        with Store.read_only(directory) as store:
            return store.has_answers(plan)


def _check_not_ignored(request: RunRequest, config: RunConfig, directory: Path) -> None:
    """ConfigError for an option given with the judge, score or report stage of a stored run
    that its run.json decides (a --limit there scored every sample without a word)."""
    given = {
        "--limit": request.limit is not None and request.limit != config.limit,
        "--seed": request.seed not in (0, config.seed),
        "frame options (--views, --frames, ...)": bool(request.frames),
        "generation options (--temperature, ...)": bool(request.generation),
        "--model-opt": bool(request.model_options),
    }
    ignored = [option for option, differs in given.items() if differs]
    if ignored:
        raise ConfigError(
            f"{', '.join(ignored)}: the {request.stage} stage of the run stored in {directory} "
            f"goes by its run.json; to change them, run the infer stage (TASK, --data, --model "
            f"and --out) with them"
        )


def _stored_configs(request: RunRequest, console: Console) -> list[RunConfig]:
    """The configurations of the run(s) stored in --out, for the judge, score and report stages:
    a TASK given re-scores them under that variant, a --judge judges them with that judge."""
    out = Path(request.out)
    dirs = [run_dir(out, i) for i in range(request.runs)] if request.runs > 1 else [out]
    configs = []
    for directory in dirs:
        config = RunConfig.load(directory)
        _check_not_ignored(request, config, directory)
        config.progress = request.progress
        config.concurrency = request.concurrency  # how this command runs: the judge's calls
        if request.task and request.task != config.task:
            changed = dataclasses.replace(config, task=request.task)
            if not _asks_the_same(changed, config, directory, console):
                raise ConfigError(
                    f"{request.task} asks the model other questions than the run stored in "
                    f"{directory} ({config.task}); its answers are not there: run the infer stage"
                )
            config = changed
        if request.judge:  # judge (or re-judge with another model) an existing run
            config.judge = request.judge
            config.judge_options = dict(request.judge_options)
            config.judge_identity = None
        configs.append(config)
    return configs


__all__ = ["RunOutcome", "RunRequest", "launch"]
