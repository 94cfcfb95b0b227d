"""The `vidbench` command. Thin: it parses arguments and calls the library."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from vidbench import cli_types as types
from vidbench.core.errors import ConfigError, DataError, VidbenchError
from vidbench.models.registry import parse_options

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vidbench.runner.run_config import RunConfig
    from vidbench.tasks.base import Task

out = Console()
err = Console(stderr=True)


def _add_frame_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("frames (override the task's FrameSpec)")
    g.add_argument(
        "--views", type=types.views, help="view count K (spread evenly over 24) or ids like 1,8,16"
    )
    g.add_argument("--frames", type=types.positive, help="frames per view")
    g.add_argument("--sampler", choices=["interval", "linspace", "keyframes"])
    g.add_argument("--order", choices=["view-first", "time-first"])
    g.add_argument(
        "--timestamps",
        action="store_true",
        default=None,
        help="label every image with its view and time",
    )
    g.add_argument(
        "--max-side",
        type=types.max_side,
        help="resize frames so the longer side is at most this (0: the video's own size; "
        "MMWorld and AutoEval-Video default to 768, grids fit in 2048)",
    )


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model and generation")
    g.add_argument("--temperature", type=types.number(0.0))
    g.add_argument("--top-p", type=types.number(0.0, 1.0, low_open=True))
    g.add_argument("--max-tokens", type=types.positive, help="most tokens a reply may have")
    g.add_argument("--gen-seed", type=int, help="sampling seed sent with every request")
    g.add_argument(
        "--model-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backend setting, repeatable (e.g. device=cuda, dtype=bfloat16)",
    )
    g.add_argument(
        "--api-key-env",
        metavar="NAME",
        type=types.env_name,
        help="environment variable holding the model's API key (same as --model-opt "
        "api_key_env=NAME); keys are never taken from the command line",
    )
    g.add_argument("--judge", help="model spec of the LLM judge (tasks scored by a judge)")
    g.add_argument(
        "--judge-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="judge backend setting, repeatable",
    )


def _model_options(args: argparse.Namespace) -> dict[str, str]:
    options = parse_options(args.model_opt)
    if args.api_key_env:
        options["api_key_env"] = args.api_key_env
    return options


def _generation(args: argparse.Namespace) -> dict[str, float | int]:
    chosen = {
        "temperature": args.temperature,
        "top_p": args.top_p,
        "max_tokens": args.max_tokens,
        "seed": args.gen_seed,
    }
    return {k: v for k, v in chosen.items() if v is not None}


def _stored_configs(args: argparse.Namespace) -> list:
    """The configurations of the run(s) stored in --out, for the judge, score and report stages:
    a TASK given re-scores them under that variant, a --judge judges them with that judge."""
    import dataclasses

    from vidbench.benchmarks.registry import open_run
    from vidbench.runner.repeat import run_dir
    from vidbench.runner.run_config import RunConfig

    out_dir = Path(args.out)
    dirs = [run_dir(out_dir, i) for i in range(args.runs)] if args.runs > 1 else [out_dir]
    configs = []
    for directory in dirs:
        config = RunConfig.load(directory)
        if args.task and args.task != config.task:
            changed = dataclasses.replace(config, task=args.task)
            if open_run(changed, err).plan != open_run(config, err).plan:
                raise ConfigError(
                    f"{args.task} asks the model other questions than the run stored in "
                    f"{directory} ({config.task}); its answers are not there: run the infer stage"
                )
            config = changed
        if args.judge:  # judge (or re-judge with another model) an existing run
            config.judge = args.judge
            config.judge_options = parse_options(args.judge_opt, "--judge-opt")
            config.judge_identity = None
        configs.append(config)
    return configs


def _cmd_run(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.registry import open_run
    from vidbench.runner.repeat import repeated_configs, run_repeated
    from vidbench.runner.run import STAGES
    from vidbench.runner.run_config import RunConfig, frame_overrides

    stages = STAGES if args.stage == "all" else (args.stage,)
    if "infer" not in stages and args.data is None and args.model is None:
        configs = _stored_configs(args)  # everything else comes from run.json
    elif args.task is None or args.data is None or args.model is None:
        raise ConfigError(
            "vidbench run: give TASK, --data and --model to infer (the judge, score and report "
            "stages of a stored run need only --out)"
        )
    else:
        config = RunConfig(
            task=args.task,
            data=args.data,
            model=args.model,
            out=args.out,
            seed=args.seed,
            limit=args.limit,
            concurrency=args.concurrency,
            cache_dir=args.cache_dir,
            ray=args.ray,
            ray_workers=args.ray_workers,
            ray_rate=args.ray_rate,
            frames=frame_overrides(
                args.views, args.frames, args.sampler, args.order, args.timestamps, args.max_side
            ),
            generation=_generation(args),
            model_options=_model_options(args),
            judge=args.judge,
            judge_options=parse_options(args.judge_opt, "--judge-opt"),
        )
        configs = repeated_configs(config, args.runs) if args.runs > 1 else [config]
    for config in configs:
        config.progress = not args.no_progress
    if args.runs > 1:  # OUT/run-1..N with seeds SEED..SEED+N-1, then mean ± std in OUT
        run_repeated([open_run(c, err) for c in configs], Path(args.out), stages, print_to=out)
        return 0
    open_run(configs[0], err).run(stages, print_to=out)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.registry import VALIDATORS

    problems = VALIDATORS[args.benchmark](
        Path(args.dir), show_progress=not args.no_progress, frames=args.frames
    )
    for problem in problems:
        out.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if problems:
        err.print(f"[red]{len(problems)} problem(s)[/] in {escape(args.dir)}")
        return 1
    err.print(f"[green]ok[/]: no problems in {escape(args.dir)}")
    return 0


def _cmd_frames(args: argparse.Namespace) -> int:
    from vidbench.core.records import MediaRef
    from vidbench.media.decode import probe
    from vidbench.media.frames import load_frames
    from vidbench.media.spec import FrameSpec

    video = Path(args.video)
    spec = FrameSpec(views=(0,), frames=args.frames, sampler=args.sampler).with_(
        max_side=args.max_side
    )
    frames = load_frames(MediaRef.single(video, args.start, args.end), spec)
    times = probe(video).times  # names give the frame's place in the whole video
    target = Path(args.out)
    target.mkdir(parents=True, exist_ok=True)
    for i, frame in enumerate(frames):
        at = times[frame.index] - times[0]
        path = target / f"{i:02d}_frame{frame.index:06d}_{at:.2f}s.jpg"
        path.write_bytes(frame.image.data)
        window = f", {frame.time_s:.2f} s into the window" if args.start or args.end else ""
        out.print(
            f"{path}  (frame {frame.index}, {at:.2f} s{window})", markup=False, highlight=False
        )
    return 0


def _cmd_tasks(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.registry import TASKS, VARIANT_FAMILIES

    for name, entry in TASKS.items():
        out.print(f"[bold]{name}[/]  {entry.spec.as_dict()}", highlight=False)
        if entry.variants:
            out.print("  variants: " + ", ".join(f"{name}:{v}" for v in entry.variants))
    out.print("Variants combine with +, e.g. 4dbench-qa:views-5+frames-4. Placeholders:")
    for family, meaning in VARIANT_FAMILIES.items():
        out.print(f"  {family}: {meaning}", highlight=False)
    return 0


def _cmd_serve_local_llm(args: argparse.Namespace) -> int:
    from vidbench.models.local_llm import serve

    def say(line: str) -> None:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
        out.file.flush()  # the spec must reach a pipe at once

    return serve(args.port, args.ctx, args.threads, say=say)


def validator_names() -> list[str]:
    from vidbench.benchmarks.registry import VALIDATORS

    return sorted(VALIDATORS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vidbench", description=__doc__)
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="evaluate a model on a task")
    p.add_argument("task", nargs="?", help="e.g. 4dbench-qa, 4dbench-qa:time-first")
    p.add_argument("--data", help="data folder or release root")
    p.add_argument("--model", help="model spec, e.g. random, constant:A")
    p.add_argument("--out", required=True, help="results directory")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--runs",
        type=types.positive,
        default=1,
        help="repeat with seeds SEED..SEED+N-1; mean ± std",
    )
    p.add_argument("--limit", type=types.positive, help="only the first N samples")
    p.add_argument("--concurrency", type=types.positive, default=16, help="model calls in flight")
    p.add_argument("--stage", choices=["all", "infer", "judge", "score", "report"], default="all")
    p.add_argument("--cache-dir", help="frame cache (default ~/.cache/vidbench/frames)")
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="infer on Ray workers: no ADDRESS starts a local cluster, 'auto' joins the running "
        "one (docs/scale-out.md)",
    )
    p.add_argument("--ray-workers", type=types.positive, default=2, help="Ray workers (replicas)")
    p.add_argument(
        "--ray-rate", type=types.number(0.0, low_open=True), help="API calls/s over all Ray workers"
    )
    _add_frame_options(p)
    _add_model_options(p)
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("validate", help="list every problem in a dataset")
    p.add_argument("benchmark", choices=validator_names())
    p.add_argument("dir")
    p.add_argument(
        "--frames",
        type=types.positive,
        help="frames per view a task will sample (default: the benchmark's official task's)",
    )
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("frames", help="write the frames a model would see as JPEGs")
    p.add_argument("video")
    p.add_argument("--frames", type=types.positive, default=8)
    p.add_argument("--sampler", choices=["interval", "linspace", "keyframes"], default="linspace")
    p.add_argument("--max-side", type=types.max_side, help="0: the video's own size")
    p.add_argument("--start", type=types.number(0.0), help="window start (seconds)")
    p.add_argument("--end", type=types.number(0.0), help="window end (seconds)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_frames)

    from vidbench.report import commands as report_commands
    from vidbench.view import commands as view_commands

    report_commands.register(sub, [_benchmark_figures])  # report, figures (+ benchmarks' own)
    view_commands.register(sub, _task_of)  # view

    p = sub.add_parser("tasks", help="list tasks and their variants")
    p.set_defaults(func=_cmd_tasks)

    p = sub.add_parser(
        "serve-local-llm", help="serve Gemma 3 270M on 127.0.0.1 (a smoke-test text model)"
    )
    p.add_argument("--port", type=types.port, help="default: a free port")
    p.add_argument("--ctx", type=types.positive, default=2048, help="context length in tokens")
    p.add_argument(
        "--threads", type=types.positive, help="CPU threads (default: llama.cpp's choice)"
    )
    p.set_defaults(func=_cmd_serve_local_llm)

    from vidbench.benchmarks.fourd import commands as fourd_commands

    fourd_commands.register(sub)  # synth 4d, demo, score-captions

    from vidbench.benchmarks.autoeval_video import commands as autoeval_commands

    autoeval_commands.register(sub)  # judge autoeval-video, judge-agreement, rules ...

    from vidbench.benchmarks.fourd.curate import commands as fourd_curate
    from vidbench.benchmarks.mmworld.curate import commands as mmworld_curate

    curate = sub.add_parser("curate", help="build a benchmark's data from your own videos")
    curate_benchmarks = curate.add_subparsers(dest="benchmark", required=True)
    mmworld_curate.register(curate_benchmarks)
    fourd_curate.register(curate_benchmarks)  # curate 4d render / motion / quality / funnel

    from vidbench.analyze import commands as analyze_commands

    analyze_commands.register(sub, _task_of)  # analyze errors, compare

    from vidbench.runner import commands as runner_commands

    runner_commands.register(sub, _task_of, view_commands.reporter(_task_of))  # sweep

    from vidbench.annotate import commands as annotate_commands

    annotate_commands.register(sub)  # annotate init / users / assign / import / export / serve
    return parser


def _benchmark_figures(results: Sequence[Path], folder: Path) -> list[Path]:
    """The benchmarks' own figures of `vidbench figures` (benchmarks/registry.py FIGURES)."""
    from vidbench.benchmarks.registry import FIGURES

    return [path for make in FIGURES for path in make(results, folder)]


def _task_of(config: RunConfig) -> Task:
    from vidbench.benchmarks.registry import task_of

    return task_of(config)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted[/]: answers so far are saved; run the same command again "
            "to continue"
        )
        return 130
    except (ConfigError, DataError) as e:
        err.print(f"[red]error[/]: {escape(str(e))}", highlight=False)
        return 2
    except VidbenchError as e:
        err.print(f"[red]error[/]: {escape(str(e))}", highlight=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
