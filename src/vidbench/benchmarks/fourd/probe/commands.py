"""`vidbench synth 4d --renderer blender`: the probe's options (knobs and renderer), turned into
typed ProbeSettings; fourd/commands.py adds them to `synth 4d` and calls `run` for this
renderer."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from vidbench import cli_types as types
from vidbench.benchmarks.fourd.curate.commands import add_blender_options
from vidbench.benchmarks.fourd.probe.knobs import ObjectKnobs
from vidbench.core.errors import ConfigError

if TYPE_CHECKING:
    from vidbench.benchmarks.fourd.probe.plan import ProbeSettings

err = Console(stderr=True)
ALL_VIEWS = 24
KNOB_OPTIONS = (
    "parts",
    "occluders",
    "lookalikes",
    "motion_size",
    "motion_speed",
    "camera_jitter",
    "input_views",
)


def values_of(parse: Callable[[str], object]) -> Callable[[str], tuple]:
    """A comma-separated list of values, each checked by ``parse``."""

    def parse_list(text: str) -> tuple:
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a value or a list like 0,1,2, got {text!r}")
        return tuple(parse(t) for t in items)

    return parse_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The renderer choice, the knobs and the Blender options of `synth 4d`."""
    p.add_argument(
        "--renderer",
        choices=["procedural", "blender"],
        default="procedural",
        help="procedural: the fast 2D drawing; blender: the probe suite rendered in 3D with "
        "answers checked against what Blender shows (docs/probe-suite.md)",
    )
    d = ObjectKnobs()
    g = p.add_argument_group(
        "probe knobs (--renderer blender; a list like 0,1,2 spreads its values over the objects)"
    )
    number = types.number(0.0)
    g.add_argument(
        "--parts",
        type=values_of(types.whole_number(2)),
        help=f"parts per object (default {d.parts})",
    )
    g.add_argument(
        "--occluders",
        type=values_of(types.non_negative),
        help="parts placed in front of counted parts, from an input camera (default 0)",
    )
    g.add_argument(
        "--lookalikes",
        type=values_of(types.non_negative),
        help="counted shape in another colour, counted colour on another shape (default 0)",
    )
    g.add_argument(
        "--motion-size", type=values_of(number), help="x the default size of motions (default 1)"
    )
    g.add_argument(
        "--motion-speed",
        type=values_of(number),
        help="x the default speed of events, 1-4 (default 1)",
    )
    g.add_argument(
        "--camera-jitter",
        type=values_of(number),
        help="x the ring's random camera offsets, 0-2 (default 1: the paper's)",
    )
    g.add_argument(
        "--input-views",
        type=types.whole_number(1, ALL_VIEWS),
        help="views the model will be shown (default 3: the official 1, 8, 16; K: views-K)",
    )
    add_blender_options(p.add_argument_group("Blender (--renderer blender)"), samples=4)


def check_procedural(args: argparse.Namespace) -> None:
    """ConfigError when a probe option is given to the procedural renderer (or --assets)."""
    if args.renderer == "blender":
        raise ConfigError("synth 4d: --assets writes the procedural scenes, not the probe's")
    given = [o for o in KNOB_OPTIONS if getattr(args, o) is not None]
    if given:
        names = ", ".join("--" + o.replace("_", "-") for o in given)
        raise ConfigError(f"synth 4d: {names} need --renderer blender")


def settings(args: argparse.Namespace) -> ProbeSettings:  # imported on use: numpy, scenes
    """The typed settings of `synth 4d --renderer blender`."""
    from vidbench.benchmarks.fourd.probe.knobs import Knobs
    from vidbench.benchmarks.fourd.probe.plan import ProbeSettings

    if args.views not in (None, ALL_VIEWS):
        raise ConfigError(
            "synth 4d --renderer blender renders the input views only, or all 24 with "
            f"--views 24; got --views {args.views} (to change the input: --input-views K)"
        )
    given = {o: getattr(args, o) for o in KNOB_OPTIONS if getattr(args, o) is not None}
    return ProbeSettings(
        objects=args.objects,
        seed=args.seed,
        frames=args.frames,
        size=args.size,
        all_views=args.views == ALL_VIEWS,
        knobs=Knobs(**given),
        samples=args.samples,
        engine=args.engine,
        device=args.device,
        denoise=args.denoise,
        threads=args.threads,
        workers=args.workers,
    )


def run(args: argparse.Namespace) -> int:
    """`synth 4d --renderer blender --out DIR`."""
    from vidbench.benchmarks.fourd.probe.build import build_probe

    report = build_probe(Path(args.out), settings(args), progress=not args.no_progress)
    err.print(
        f"{len(report.rendered)} of {report.objects} objects rendered, {report.kept} of "
        f"{report.generated} questions kept; wrote {args.out} (README.md: the dataset card)"
    )
    for reason, n in sorted(report.reasons().items()):
        err.print(f"  dropped {n}: {reason}", highlight=False)
    for problem in report.failed:
        err.print(f"  {problem.message()}", markup=False, highlight=False)
    return 1 if report.failed else 0
