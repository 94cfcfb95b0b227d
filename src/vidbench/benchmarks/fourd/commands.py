"""The 4D-Bench commands: `vidbench synth 4d`, `vidbench demo` and `vidbench score-captions`.

cli.py calls `register(subparsers)`; each handler parses its arguments and calls the library
(score-captions' arguments become typed options here: the argparse namespace stops here).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from vidbench import cli_options
from vidbench import cli_types as types
from vidbench.benchmarks.fourd.captions.rows import HUMAN_SEED
from vidbench.benchmarks.fourd.loader import VIEWS_PER_OBJECT
from vidbench.benchmarks.fourd.score_captions import CaptionScoring
from vidbench.benchmarks.fourd.variants import OFFICIAL_VIEWS
from vidbench.cli_options import CURATE_HELP, CommandGroups
from vidbench.console import counted, err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.media.spec import views_evenly
from vidbench.models.registry import parse_options
from vidbench.scoring.captions.metrics import ALL_METRICS, PROTOCOLS, SBERT_RUNTIMES


def add_arguments(p: argparse.ArgumentParser) -> None:
    add = p.add_argument
    add("--pred", help='JSON Lines of {"uid": ..., "caption": ...}')
    add("--refs", required=True, help="human_annotations.csv (folder_name, caption_1..5)")
    add("--out", required=True, help="SCORES.json to write (judgments: store.sqlite beside it)")
    add("--metrics", help=f"comma-separated of {','.join(ALL_METRICS)} (default: all)")
    add(
        "--protocol",
        choices=PROTOCOLS,
        default="vidbench",
        help="metric protocol: vidbench, official (the paper's scripts) or coco (default vidbench)",
    )
    add("--cider-df", help="cidereval document-frequency pickle (e.g. COCO-val's)")
    add("--human", action="store_true", help="also score the leave-one-out Human row")
    add("--human-seed", type=int, default=HUMAN_SEED, help="which caption each object holds out")
    cli_options.add_judge(p, what="the GPT-Appearance/Action judge")
    add("--judge-attempts", type=types.positive, default=3, help="tries per unparseable reply")
    cli_options.add_concurrency(p, what="judge calls")
    add("--bert-model", default="bert-base-uncased", help="BERTScore model name or path")
    add("--bert-layers", type=types.positive, help="BERTScore layer (default: bert-score's)")
    add("--sbert-model", help="sentence-transformers model path (default: all-MiniLM-L6-v2)")
    add("--device", help="torch device of the embedding models (default: cuda if available)")
    add(
        "--sbert-runtime",
        choices=SBERT_RUNTIMES,
        default="auto",
        help="SBERT on ONNX Runtime (onnx) or PyTorch (torch); auto: onnx on the CPU",
    )


def options(args: argparse.Namespace) -> CaptionScoring:
    """The options `add_arguments` parsed."""
    return CaptionScoring(
        refs=Path(args.refs),
        out=Path(args.out),
        pred=Path(args.pred) if args.pred else None,
        metrics=args.metrics,
        protocol=args.protocol,
        cider_df=args.cider_df,
        human=args.human,
        human_seed=args.human_seed,
        judge=args.judge,
        judge_options=parse_options(args.judge_opt, "--judge-opt"),
        judge_attempts=args.judge_attempts,
        concurrency=args.concurrency,
        bert_model=args.bert_model,
        bert_layers=args.bert_layers,
        sbert_model=args.sbert_model,
        device=args.device,
        sbert_runtime=args.sbert_runtime,
    )


def _cmd_synth(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.probe import commands as probe
    from vidbench.benchmarks.fourd.synthetic import generate

    if args.renderer == "blender" and not args.assets:
        if not args.out:
            raise ConfigError("synth 4d --renderer blender needs --out (the dataset folder)")
        return probe.run(args)
    probe.check_procedural(args)  # the knobs belong to --renderer blender
    if args.assets:  # animated glTF assets for `curate 4d render`, not a dataset
        from vidbench.benchmarks.fourd.curate import commands as fourd_curate

        return fourd_curate.run_assets(args)
    if not args.out:
        raise ConfigError("synth 4d needs --out (a dataset) or --assets (glTF assets)")
    views = args.views or VIEWS_PER_OBJECT
    if views <= max(OFFICIAL_VIEWS):  # said before the work, not when every sample fails
        chosen = ",".join(map(str, views_evenly(len(OFFICIAL_VIEWS), views)))
        err.print(
            f"[yellow]warning[/]: --views {views} renders views 0-{views - 1}, and 4dbench-qa "
            f"and 4dbench-caption read views {', '.join(map(str, OFFICIAL_VIEWS))}: run them "
            f"on this dataset with --views among 0-{views - 1} (e.g. --views {chosen})",
            highlight=False,
        )
    try:
        generate(
            Path(args.out),
            objects=args.objects,
            seed=args.seed,
            views=views,
            frames=args.frames,
            size=args.size,
            progress=not args.no_progress,
        )
    except ValueError as e:  # settings the generator cannot honour, e.g. --frames 8
        raise ConfigError(f"synth 4d: {e}") from None
    objects = counted(args.objects, "object")
    err.print(f"wrote a 4D-Bench-layout dataset of {objects} to {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.demo import run_demo

    run_demo(Path(args.out), objects=args.objects, show_progress=not args.no_progress, console=out)
    return 0


def _cmd_score_captions(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.score_captions import covers_every_object, score_caption_files
    from vidbench.runner.lock import results_lock

    with results_lock(Path(args.out).parent, "vidbench score-captions"):
        scores = score_caption_files(options(args), out)
    if covers_every_object(scores):
        return EXIT_OK
    err.print(  # as `run` says it: objects left out (no verdict, a bad row) never exit 0
        f"[red]incomplete[/]: the scores in {escape(args.out)} do not cover every object "
        f"(exit code {EXIT_INCOMPLETE}); error_details of each row names each and why (a judge "
        "call that failed is asked again by the same command)"
    )
    return EXIT_INCOMPLETE


def register(groups: CommandGroups) -> None:
    """`synth 4d`, `demo`, `score-captions` and `curate 4d ...`."""
    from vidbench.benchmarks.fourd.curate import commands as fourd_curate

    subparsers = groups.top
    synth = groups.group("synth", "generate a synthetic dataset with exact answers")
    p = synth.add_parser("4d", help="procedural animated objects in the 4D-Bench layout")
    p.add_argument("--out", help="the dataset folder to write (required unless --assets)")
    p.add_argument("--objects", type=types.positive, default=20, help="objects (default 20)")
    cli_options.add_seed(p, "the scenes and questions drawn (same seed, same files)")
    p.add_argument(
        "--views",
        type=types.positive,
        help="views rendered per object (default 24; --renderer blender: the input's, or 24)",
    )
    p.add_argument(
        "--frames",
        type=types.positive,
        default=48,
        help="frames per video (a multiple of 6, >= 12)",
    )
    p.add_argument(
        "--size", type=types.whole_number(8), default=128, help="pixels, square (default 128)"
    )
    fourd_curate.add_assets_argument(p)
    from vidbench.benchmarks.fourd.probe import commands as probe

    probe.add_arguments(p)
    p.set_defaults(func=_cmd_synth)

    p = subparsers.add_parser("demo", help="synthetic 4D dataset + built-in baselines, end to end")
    p.add_argument("--out", default="demo", help="folder for data, results, report (default demo)")
    p.add_argument("--objects", type=types.positive, default=200, help="objects (default 200)")
    p.set_defaults(func=_cmd_demo)

    p = subparsers.add_parser("score-captions", help="4D-Bench Table 2 for captions made elsewhere")
    add_arguments(p)
    p.set_defaults(func=_cmd_score_captions)

    fourd_curate.register(groups.group("curate", CURATE_HELP))  # curate 4d render, qa, ...
