"""`vidbench curate 4d render|motion|quality|qa|captions|funnel`, and `synth 4d --assets`.

cli.py calls `register(curate_subparsers)` with the subparsers of its `curate` command, and
`add_assets_argument(synth_parser)` / `run_assets(args)` for `synth 4d --assets DIR`. Handlers
parse arguments and call the library.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vidbench import cli_types as types
from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.benchmarks.fourd.curate.motion import MotionSettings
from vidbench.benchmarks.fourd.curate.quality import KEEP, LABELS  # numpy only; torch on use
from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK


def _add_motion(p: argparse.ArgumentParser) -> None:
    d = MotionSettings()
    g = p.add_argument_group("motion (pixel change between consecutive frames)")
    g.add_argument("--threshold", type=float, default=d.threshold, help="fraction of pixels")
    g.add_argument(
        "--tolerance",
        type=types.whole_number(0, 255),
        default=d.tolerance,
        help="per channel, 0-255",
    )
    g.add_argument(
        "--min-length", type=types.positive, default=d.min_length, help="frames of motion"
    )


def _motion(args: argparse.Namespace) -> MotionSettings:
    return MotionSettings(args.threshold, args.tolerance, args.min_length)


def _print_problems(problems: list[AssetProblem]) -> None:
    for problem in problems:
        err.print(f"  {problem.message()}", markup=False, highlight=False)


def _print_funnel(folder: Path) -> None:
    from vidbench.report.funnel import Funnel, funnel_table

    out.print(funnel_table(Funnel.read(folder), "curate 4d funnel"))


def _cmd_render(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.curate.render import render_manifest
    from vidbench.benchmarks.fourd.curate.settings import RenderSettings

    settings = RenderSettings(
        views=args.views,
        size=args.size,
        max_frames=args.max_frames,
        fps=args.fps,
        seed=args.seed,
        engine=args.engine,
        device=args.device,
        samples=args.samples,
        denoise=args.denoise,
        threads=args.threads,
        motion=_motion(args),
    )
    report = render_manifest(
        Path(args.manifest), Path(args.out), settings, args.workers, not args.no_progress
    )
    err.print(
        f"{len(report.rendered)} rendered ({report.skipped} already done), "
        f"{len(report.dropped)} dropped",
        highlight=False,
    )
    _print_problems(report.dropped)
    if report.failed:
        err.print(f"{len(report.failed)} failed to render (a rerun tries them again):")
        _print_problems(report.failed)
    if report.unusable:
        err.print(f"{len(report.unusable)} manifest entries not usable (fix the manifest):")
        _print_problems(report.unusable)
    if report.others:
        shown = ", ".join(report.others[:5]) + (" ..." if len(report.others) > 5 else "")
        err.print(
            f"{len(report.others)} objects in {args.out} are not in this manifest ({shown}): "
            "`curate 4d qa` reads every object there; remove those not wanted",
            markup=False,
            highlight=False,
        )
    _print_funnel(Path(args.out))
    return EXIT_INCOMPLETE if report.failed or report.unusable else EXIT_OK


def _cmd_motion(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.curate.motion_filter import filter_motion

    target = Path(args.out or args.videos)
    kept, dropped = filter_motion(
        Path(args.videos), target, _motion(args), args.view, not args.no_progress
    )
    for result in kept:
        out.print(f"{result.uid}  frames {result.start}-{result.end}", highlight=False)
    err.print(f"{len(kept)} moving, {len(dropped)} dropped; wrote {target / 'motion.jsonl'}")
    _print_problems(dropped)
    return 0


def _cmd_quality(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.curate import quality

    if args.mode == "train":
        result = quality.train(
            quality.TrainOptions(
                Path(args.videos), Path(args.labels), args.weights, Path(args.out),
                args.held_out, args.epochs, args.lr, args.finetune, args.seed,
            )
        )  # fmt: skip
        err.print(f"held-out accuracy {result['accuracy']:.3f} on {result['held_out']} objects")
        err.print(f"confusion (rows: true {', '.join(LABELS)}): {result['confusion']}")
        _print_problems([AssetProblem(**p) for p in result["problems"]])
        return 0
    out = Path(args.out) if args.out else None
    options = quality.PredictOptions(Path(args.videos), Path(args.model), out, not args.no_progress)
    records, dropped = quality.predict(options)
    kept = sum(r["label"] == KEEP for r in records)
    err.print(f"{kept} of {len(records)} objects are {KEEP}")
    _print_problems(dropped)
    return 0


def _add_quality(p: argparse.ArgumentParser) -> None:
    labels = "; ".join(LABELS)
    modes = p.add_subparsers(dest="mode", required=True)
    t = modes.add_parser("train", help="fit the classifier on labelled objects")
    t.add_argument("videos", help="rendered objects (<uid>/view_0_rgb_white_bg.mp4)")
    t.add_argument("--labels", required=True, help=f"CSV uid,label; labels: {labels}")
    t.add_argument("--weights", required=True, help="CLIP vision weights: folder or HF cache name")
    t.add_argument("--out", required=True, help="writes OUT/model and OUT/quality_train.json")
    t.add_argument("--held-out", type=float, default=0.2, help="fraction kept for evaluation")
    t.add_argument("--epochs", type=types.positive, default=200, help="passes over the data")
    t.add_argument(
        "--lr", type=types.number(0.0, low_open=True), default=1e-2, help="learning rate"
    )
    t.add_argument("--finetune", action="store_true", help="train the encoder too")
    t.add_argument("--seed", type=int, default=0, help="the split and the training (default 0)")
    r = modes.add_parser("predict", help="label rendered objects by an 8-view vote")
    r.add_argument("videos", help="rendered objects (<uid>/view_K_rgb_white_bg.mp4)")
    r.add_argument("--model", required=True, help="the model folder `train` wrote (OUT/model)")
    r.add_argument("--out", help="where quality.jsonl and funnel.json go (default: VIDEOS)")


def _cmd_funnel(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.curate.funnel import read_funnel
    from vidbench.report.funnel import funnel_table

    out.print(funnel_table(read_funnel(Path(args.dir)), "curate 4d funnel"))
    return 0


def add_blender_options(parser: argparse._ActionsContainer, samples: int) -> None:
    """How Blender renders: `curate 4d render` and the probe (`synth 4d --renderer blender`)."""
    parser.add_argument(
        "--samples", type=types.positive, default=samples, help="Cycles samples per pixel"
    )
    parser.add_argument(
        "--engine",
        choices=["cycles", "eevee"],
        default="cycles",
        help="Blender's renderer (EEVEE needs OpenGL: keep Cycles on a CPU machine)",
    )
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="Cycles device")
    parser.add_argument("--denoise", action="store_true", help="OpenImageDenoise after sampling")
    parser.add_argument("--workers", type=types.positive, default=1, help="objects in parallel")
    parser.add_argument(
        "--threads", type=types.non_negative, default=0, help="per worker (0: cores / workers)"
    )


def register(curate_benchmarks: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`curate 4d render|motion|quality|funnel`."""
    fourd = curate_benchmarks.add_parser("4d", help="build 4D-Bench data from animated 3D assets")
    stages = fourd.add_subparsers(dest="stage", required=True)

    p = stages.add_parser("render", help="animated assets -> 24-view videos (Blender)")
    p.add_argument("manifest", help='manifest.jsonl ({"uid": ..., "path": ...}) or uid->path JSON')
    p.add_argument("--out", required=True, help="output folder (official layout)")
    p.add_argument(
        "--views", type=types.positive, default=24, help="cameras on the ring (default 24)"
    )
    p.add_argument("--size", type=types.positive, default=512, help="pixels, square")
    p.add_argument(
        "--max-frames",
        type=types.whole_number(2),
        default=125,
        help="at most this many frames of the animation (default 125)",
    )
    p.add_argument("--fps", type=types.positive, default=24, help="video frame rate (default 24)")
    p.add_argument("--seed", type=int, default=0, help="camera jitter and Cycles noise")
    add_blender_options(p, samples=16)
    _add_motion(p)
    p.set_defaults(func=_cmd_render)

    p = stages.add_parser("motion", help="motion range of existing videos; drops static ones")
    p.add_argument("videos", help="<uid>/view_K_rgb_white_bg.mp4 folders, or a folder of .mp4")
    p.add_argument("--out", help="where motion.jsonl and funnel.json go (default: VIDEOS)")
    p.add_argument(
        "--view", type=types.whole_number(0, 23), default=0, help="which view of each object"
    )
    _add_motion(p)
    p.set_defaults(func=_cmd_motion)

    p = stages.add_parser("quality", help="CLIP quality classifier: train | predict")
    _add_quality(p)
    p.set_defaults(func=_cmd_quality)

    from vidbench.benchmarks.fourd.curate.qa import commands as qa_commands

    qa_commands.register(stages)  # curate 4d qa, curate 4d captions

    p = stages.add_parser("funnel", help="print what each stage kept and dropped, and why")
    p.add_argument("dir", help="the output folder of the stages")
    p.set_defaults(func=_cmd_funnel)


def add_assets_argument(synth: argparse.ArgumentParser) -> None:
    """`synth 4d --assets DIR` (animated glTF + manifest.jsonl for `curate 4d render`)."""
    synth.add_argument(
        "--assets", help="write the scenes as animated glTF + manifest.jsonl here instead"
    )


def run_assets(args: argparse.Namespace) -> int:
    """`synth 4d --assets DIR`: uses --objects, --seed and --frames."""
    from vidbench.benchmarks.fourd.synthetic.assets import export_assets

    manifest = export_assets(
        Path(args.assets), args.objects, args.seed, args.frames, progress=not args.no_progress
    )
    err.print(f"wrote {args.objects} animated glTF assets and {manifest}")
    return 0
