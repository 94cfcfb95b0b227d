"""The 4D-Bench command line: `vidbench score-captions` arguments, turned into typed options.

cli.py adds `add_arguments` to its sub-parser and calls `score_caption_files(options(args))`;
the argparse namespace stops here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vidbench import cli_types as types
from vidbench.benchmarks.fourd.captions.human import HUMAN_SEED
from vidbench.benchmarks.fourd.score_captions import CaptionScoring
from vidbench.models.registry import parse_options
from vidbench.scoring.captions.metrics import ALL_METRICS, PROTOCOLS, SBERT_RUNTIMES


def add_arguments(p: argparse.ArgumentParser) -> None:
    add = p.add_argument
    add("--pred", help='JSON Lines of {"uid": ..., "caption": ...}')
    add("--refs", required=True, help="human_annotations.csv (folder_name, caption_1..5)")
    add("--out", required=True, help="SCORES.json to write (judgments: store.sqlite beside it)")
    add("--metrics", help=f"comma-separated of {','.join(ALL_METRICS)} (default: all)")
    add("--protocol", choices=PROTOCOLS, default="vidbench")
    add("--cider-df", help="cidereval document-frequency pickle (e.g. COCO-val's)")
    add("--human", action="store_true", help="also score the leave-one-out Human row")
    add("--human-seed", type=int, default=HUMAN_SEED, help="which caption each object holds out")
    add("--judge", help="model spec of the GPT-Appearance/Action judge, e.g. openai:gpt-4o")
    add("--judge-opt", action="append", default=[], metavar="KEY=VALUE")
    add("--judge-attempts", type=types.positive, default=3, help="tries per unparseable reply")
    add("--concurrency", type=types.positive, default=16, help="judge calls in flight")
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
