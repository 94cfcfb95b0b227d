"""Options several `vidbench` commands share, declared once: where results go, how many calls
are in flight, the judge, the model and its generation settings, the frames a model sees, and
where a run runs. Each adds its options to a parser; values are checked at parse time
(cli_types.py), so every count is a whole number >= 1.

And where a benchmark adds commands of its own: its `Commands` part registers them in
`CommandGroups`, at the top (`vidbench X`) or under a command several benchmarks share
(`vidbench curate 4d`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from vidbench import cli_types as types
from vidbench.benchmark import BenchmarkPart

DEFAULT_CONCURRENCY = 16


def add_out(p: argparse.ArgumentParser, help: str, required: bool = True) -> None:
    p.add_argument("--out", required=required, metavar="DIR", help=help)


def add_fresh(p: argparse.ArgumentParser) -> None:
    """`--fresh`, for a command whose --out holds a run's store and results."""
    p.add_argument(
        "--fresh",
        action="store_true",
        help="start over in --out: delete its stored answers and results first (a results "
        "folder holding a run over other data is otherwise refused)",
    )


def add_concurrency(
    p: argparse._ActionsContainer,
    default: int = DEFAULT_CONCURRENCY,
    what: str = "model calls",
) -> None:
    p.add_argument(
        "--concurrency",
        type=types.positive,
        default=default,
        metavar="N",
        help=f"{what} in flight at once (default {default})",
    )


def add_seed(p: argparse._ActionsContainer, help: str) -> None:
    p.add_argument("--seed", type=int, default=0, help=f"{help} (default 0)")


def add_judge(
    p: argparse._ActionsContainer,
    required: bool = False,
    what: str = "the LLM judge",
    example: str = "openai:gpt-4o",
) -> None:
    """--judge SPEC and --judge-opt KEY=VALUE (models/registry.parse_options reads them)."""
    p.add_argument(
        "--judge", required=required, metavar="SPEC", help=f"model spec of {what}, e.g. {example}"
    )
    p.add_argument(
        "--judge-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the judge's backend, repeatable (e.g. api_key_env=NAME)",
    )


def add_model_options(
    p: argparse._ActionsContainer, flag: str = "--model-opt", whose: str = "the model's"
) -> None:
    """A repeatable KEY=VALUE backend setting, e.g. --model-opt or --generator-opt."""
    p.add_argument(
        flag,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"a setting of {whose} backend, repeatable (e.g. device=cuda, dtype=bfloat16)",
    )


def add_generation(p: argparse.ArgumentParser) -> None:
    """The model, its generation settings and the judge (`vidbench run`)."""
    g = p.add_argument_group("model and generation")
    g.add_argument("--temperature", type=types.number(0.0), help="sampling temperature")
    g.add_argument(
        "--top-p", type=types.number(0.0, 1.0, low_open=True), help="nucleus sampling mass"
    )
    g.add_argument("--max-tokens", type=types.positive, help="most tokens a reply may have")
    g.add_argument("--gen-seed", type=int, help="sampling seed sent with every request")
    add_model_options(g)
    g.add_argument(
        "--api-key-env",
        metavar="NAME",
        type=types.env_name,
        help="environment variable holding the model's API key (same as --model-opt "
        "api_key_env=NAME); keys are never taken from the command line",
    )
    add_judge(g, what="the LLM judge (tasks scored by a judge)")


def add_frames(
    p: argparse.ArgumentParser, title: str = "frames (override the task's FrameSpec)"
) -> argparse._ArgumentGroup:
    """FrameSpec overrides (`vidbench run`, the curation commands); the group, for more."""
    g = p.add_argument_group(title)
    g.add_argument(
        "--views", type=types.views, help="view count K (spread evenly over 24) or ids like 1,8,16"
    )
    g.add_argument("--frames", type=types.positive, help="frames per view")
    g.add_argument(
        "--sampler",
        choices=["interval", "linspace", "keyframes"],
        help="how frames are picked from a video",
    )
    g.add_argument(
        "--order", choices=["view-first", "time-first"], help="the order images are sent in"
    )
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
    return g


def add_run_place(p: argparse.ArgumentParser, limit_help: str) -> None:
    """Where and how much of a run runs: seed, limit, concurrency, cache, Ray."""
    add_seed(p, "the run's seed (random baselines, bootstrap intervals)")
    p.add_argument("--limit", type=types.positive, metavar="N", help=limit_help)
    add_concurrency(p)
    p.add_argument(
        "--cache-dir", metavar="DIR", help="frame cache (default ~/.cache/vidbench/frames)"
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="infer on Ray workers: no ADDRESS starts a local cluster, 'auto' joins the running "
        "one (docs/scale-out.md)",
    )
    p.add_argument(
        "--ray-workers", type=types.positive, default=2, help="Ray workers (replicas; default 2)"
    )
    p.add_argument(
        "--ray-rate",
        type=types.number(0.0, low_open=True),
        help="API calls per second over all Ray workers",
    )


# the shared `curate` command's help (every benchmark that builds data adds itself under it)
CURATE_HELP = "build a benchmark's data from your own videos or assets"


class CommandGroups:
    """Where a benchmark adds its commands: `vidbench COMMAND ...` (`top`), or under a command
    that several benchmarks share, e.g. `vidbench curate 4d ...` (`group("curate", ...)`)."""

    def __init__(self, top: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        self.top = top
        self._groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}

    def group(self, name: str, help: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        """The subcommands of `vidbench NAME` (made by the first benchmark that asks)."""
        if name not in self._groups:
            parser = self.top.add_parser(name, help=help)
            self._groups[name] = parser.add_subparsers(dest=f"{name}_benchmark", required=True)
        return self._groups[name]


@dataclass(frozen=True)
class Commands(BenchmarkPart):
    """A benchmark part: `register(groups)` adds the benchmark's own commands (curation,
    synthesis, judging rules, ...) to the command line."""

    register: Callable[[CommandGroups], None]
