"""The `vidbench` command. Thin: it parses arguments and calls the library; `vidbench --help`
says what vidbench does and lists the commands by job (COMMAND_GROUPS)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from rich.markup import escape

from vidbench import __version__
from vidbench import cli_types as types
from vidbench.console import err, out, roomy
from vidbench.core.errors import (
    EXIT_CONFIG,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    ConfigError,
    DataError,
    VidbenchError,
)
from vidbench.core.threads import exit_if_left_running, wait_for_left_running


def _cmd_validate(args: argparse.Namespace) -> int:
    from vidbench.registry import by_name, source_of

    benchmark = by_name(args.benchmark)
    try:
        problems = benchmark.validate(Path(args.dir), not args.no_progress, args.frames)
    except VidbenchError:
        raise
    except Exception as e:  # a bug of the benchmark's code (a plugin's): named, not a traceback
        where = f"benchmark {benchmark.name} ({source_of(benchmark)})"
        raise VidbenchError(f"{where}: its validate raised {e!r}") from e
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
    from rich.table import Table

    from vidbench.registry import all_tasks, variant_families

    table = Table(title="Tasks: vidbench run TASK or TASK:VARIANT+VARIANT", title_justify="left")
    table.add_column("task", no_wrap=True, style="bold")
    table.add_column("what the model is given (the official input)")
    table.add_column("variants")
    for name, entry in all_tasks().items():
        table.add_row(name, entry.spec.describe(), ", ".join(entry.variants) or "-")
    roomy(out).print(table)
    out.print("Variants combine with +, e.g. 4dbench-qa:views-5+frames-4. Placeholders:")
    for family, meaning in variant_families().items():
        out.print(f"  {family}: {meaning}", highlight=False)
    return 0


def _cmd_serve_local_llm(args: argparse.Namespace) -> int:
    from vidbench.models.local_llm import serve

    def say(line: str) -> None:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
        out.file.flush()  # the spec must reach a pipe at once

    return serve(args.port, args.ctx, args.threads, say=say)


DESCRIPTION = """\
vidbench evaluates multimodal LLMs on video and 4D object understanding (4D-Bench, MMWorld,
AutoEval-Video, and benchmarks you declare in a benchmark.toml) with the papers' protocols,
resumably, against APIs or local models; and it builds such benchmarks from your own videos
and 3D assets, with people reviewing the results in a web app.

Start with `vidbench demo`; `vidbench COMMAND --help` tells more about a command."""

# `vidbench --help` lists the commands by job, in this order; every command is in one group
# (tests/cli/test_help_texts.py checks it)
COMMAND_GROUPS = {
    "evaluate models": (
        "run", "sweep", "tasks", "validate", "frames", "judge", "score-captions", "demo",
        "serve-local-llm",
    ),
    "look at results": ("report", "view", "figures", "compare", "analyze", "predictions"),
    "build benchmarks": ("synth", "curate", "rules", "judge-agreement", "audit", "export"),
    "review with people": ("annotate",),
}  # fmt: skip


def _grouped_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> str:
    """The commands' one-line helps under their groups' titles (argparse lists subcommands in
    one block: this is the help's epilog instead); a command in no group comes last."""
    helps = {action.dest: action.help or "" for action in sub._choices_actions}
    width = max(len(name) for name in helps) + 2
    placed = {name for names in COMMAND_GROUPS.values() for name in names}
    groups = {**COMMAND_GROUPS, "other commands": tuple(n for n in helps if n not in placed)}
    lines = []
    for title, names in groups.items():
        present = [name for name in names if name in helps]
        if present:
            lines.append(f"{title}:")
            lines += [f"  {name:<{width}}{helps[name]}" for name in present]
            lines.append("")
    return "\n".join(lines).rstrip()


def benchmark_names() -> list[str]:
    from vidbench.registry import benchmarks

    return sorted(b.name for b in benchmarks())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vidbench",
        usage="%(prog)s [--no-progress] [--version] COMMAND ...",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # the commands are listed by job in the epilog (_grouped_commands), not in one block
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS
    )

    from vidbench.runner import commands as runner_commands
    from vidbench.view import commands as view_commands

    # the sweep's HTML report is view/'s, which sits above the runner
    runner_commands.register(sub, view_commands.write_sweep_report)

    p = sub.add_parser("validate", help="list every problem in a dataset")
    p.add_argument("benchmark", choices=benchmark_names(), help="which benchmark's layout")
    p.add_argument("dir", help="the data folder (or release root) to check")
    p.add_argument(
        "--frames",
        type=types.positive,
        help="frames per view a task will sample (default: the benchmark's official task's)",
    )
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("frames", help="write the frames a model would see as JPEGs")
    p.add_argument("video", help="the video file")
    p.add_argument("--frames", type=types.positive, default=8, help="frames to take (default 8)")
    p.add_argument(
        "--sampler",
        choices=["interval", "linspace", "keyframes"],
        default="linspace",
        help="how frames are picked (default linspace)",
    )
    p.add_argument("--max-side", type=types.max_side, help="0: the video's own size")
    p.add_argument("--start", type=types.number(0.0), help="window start (seconds)")
    p.add_argument("--end", type=types.number(0.0), help="window end (seconds)")
    p.add_argument("--out", required=True, help="folder for the JPEG files")
    p.set_defaults(func=_cmd_frames)

    from vidbench.report import commands as report_commands
    from vidbench.runner.data_identity import changed_since_scored

    report_commands.register(sub, changed_since_scored)  # report, figures
    view_commands.register(sub)  # view

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

    from vidbench.cli_options import CommandGroups, Commands
    from vidbench.registry import parts

    groups = CommandGroups(sub)
    for commands in parts(Commands):  # each adds its own: synth 4d, curate 4d, judge autoeval-video
        commands.register(groups)

    from vidbench.analyze import commands as analyze_commands

    analyze_commands.register(sub)  # analyze errors, compare

    from vidbench.audit import commands as audit_commands

    audit_commands.register(sub)  # audit RUN... --out DIR, audit --plan N

    from vidbench.export import commands as export_commands

    export_commands.register(sub)  # export DIR --to hf OUT

    from vidbench.annotate import commands as annotate_commands

    annotate_commands.register(sub)  # annotate init/users/import/export/serve
    parser.epilog = _grouped_commands(sub)
    return parser


_terminated: list[int] = []  # the SIGTERM received, if one was


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM, handled as Ctrl-C is by whatever handles SIGINT at the moment (asyncio's runner
    cancels its task, elsewhere a KeyboardInterrupt), so the same clean-up runs: servers
    stopped, temporary folders removed, the results lock released."""
    _terminated.append(signum)
    on_interrupt = signal.getsignal(signal.SIGINT)
    if not callable(on_interrupt):  # SIGINT ignored (a background job): interrupt all the same
        raise KeyboardInterrupt
    on_interrupt(signal.SIGINT, frame)


def _interrupted() -> int:
    """Said once the command's own clean-up ran; a weights load or device batch still running
    (nothing of it would be saved) is not waited for: the process ends here."""
    if _terminated:
        err.print(
            "[yellow]terminated[/] (SIGTERM): answers so far are saved; run the same "
            "command again to continue"
        )
        code = EXIT_TERMINATED
    else:
        err.print(
            "[yellow]interrupted[/]: answers so far are saved; run the same command again "
            "to continue"
        )
        code = EXIT_INTERRUPTED
    exit_if_left_running(code)
    return code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _terminated.clear()
    handles_signals = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if handles_signals else None
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _interrupted()
    except (ConfigError, DataError) as e:
        err.print(f"[red]error[/]: {escape(str(e))}", highlight=False)
        return EXIT_CONFIG
    except VidbenchError as e:
        err.print(f"[red]error[/]: {escape(str(e))}", highlight=False)
        return EXIT_ERROR
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        wait_for_left_running()  # a batch still on the device when the run stopped on an error


if __name__ == "__main__":
    sys.exit(main())
