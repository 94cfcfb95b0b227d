"""`vidbench score-captions`: Table 2 of 4D-Bench for captions produced elsewhere.

    vidbench score-captions --pred PRED.jsonl --refs human_annotations.csv --out SCORES.json \
        [--metrics bleu,meteor,rouge,cider,bert,sbert,gpt] [--judge SPEC] \
        [--protocol vidbench|official|coco] [--cider-df PATH] [--human]

Bad records are named and skipped, the rest is scored, and the counts go into SCORES.json.
LLM judgments are stored (and never asked twice) in store.sqlite beside SCORES.json.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vidbench import cli_types as types
from vidbench.benchmarks.fourd.captions import gpt_judges, table
from vidbench.benchmarks.fourd.captions.human import HUMAN_SEED, human_rows
from vidbench.benchmarks.fourd.captions.inputs import Read, read_predictions, read_references
from vidbench.benchmarks.fourd.captions.rows import CaptionRow, model_rows
from vidbench.core.errors import ConfigError
from vidbench.models.registry import parse_options
from vidbench.report.results_dir import write_json
from vidbench.scoring.captions.metrics import (
    ALL_METRICS,
    AUTOMATIC,
    PROTOCOLS,
    SBERT_RUNTIMES,
    CaptionMetricSettings,
    check_models,
    score_captions,
)
from vidbench.scoring.judge import NO_VERDICT, no_verdict_fields, no_verdict_message


@dataclass(frozen=True)
class CaptionScoring:
    """What `score-captions` scores and how (the command line's options, checked)."""

    refs: Path
    out: Path
    pred: Path | None = None
    metrics: str | None = None  # comma-separated; None: all automatic (and gpt with a judge)
    protocol: str = "vidbench"
    cider_df: str | None = None
    human: bool = False
    human_seed: int = HUMAN_SEED
    judge: str | None = None
    judge_options: dict[str, str] = field(default_factory=dict)
    judge_attempts: int = 3
    concurrency: int = 16
    bert_model: str = "bert-base-uncased"
    bert_layers: int | None = None
    sbert_model: str | None = None
    device: str | None = None
    sbert_runtime: str = "auto"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CaptionScoring:
        """The options `add_arguments` parsed (the namespace stops here)."""
        return cls(
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


def _metrics(text: str | None, judge: str | None) -> tuple[str, ...]:
    if text is None:
        return (*AUTOMATIC, "gpt") if judge else AUTOMATIC
    chosen = tuple(m.strip() for m in text.split(",") if m.strip())
    if "gpt" in chosen and not judge:
        raise ConfigError("--metrics gpt needs an LLM judge: give --judge SPEC")
    return chosen


def _cross_check(preds: Read, refs: Read, refs_path: Path) -> None:
    """Predictions whose uid has no usable references become issues (and are dropped)."""
    unusable = {i.problem.record: i for i in refs.issues}
    for uid in [u for u in preds.items if u not in refs.items]:
        del preds.items[uid]
        if uid in unusable:
            reason = unusable[uid].problem.message.removesuffix("; object skipped")
            preds.add_issue("missing_references", uid, refs_path, f"references unusable ({reason})")
        else:
            preds.add_issue("unknown_uid", uid, refs_path, "uid not in the references; not scored")


def _judge(
    rows: list[CaptionRow],
    settings: CaptionMetricSettings,
    options: CaptionScoring,
    store_dir: Path,
    console: Console,
) -> tuple[dict[str, gpt_judges.Verdict], dict[str, Any]]:
    from vidbench.runner.judging import JudgeModel, ask_judge
    from vidbench.runner.store import Store

    official = settings.protocol == "official"
    generation = gpt_judges.OFFICIAL_GENERATION if official else gpt_judges.DEFAULT_GENERATION
    calls = [
        c
        for row in rows
        for c in gpt_judges.judge_calls(row.judge_target(), not official, generation)
    ]
    assert options.judge is not None  # "gpt" is among the metrics only with a judge
    judge = JudgeModel(options.judge, options.judge_options, options.concurrency)
    store = Store(store_dir)
    try:  # an unreachable judge stops before anything is scored
        verdicts, identity = ask_judge(judge, calls, store, options.judge_attempts, console=console)
    finally:
        store.close()
    info = {
        "model": identity,
        "references": settings.judge_references,
        "reference_choice": (
            "one reference per object: random.Random(42) stream over the reference uids in "
            "sorted order, randint(1, 5) (human row: choice of the 4 others)"
            if official
            else "all references of the object; the object's score is their mean"
        ),
        "parser": "whole reply as a dict literal" if official else "first dict literal in it",
        "generation": generation.as_dict(),
        "prompt_versions": [gpt_judges.prompt_version(k) for k in gpt_judges.KINDS],
        "max_attempts": options.judge_attempts,
    }
    return verdicts, info


def _score_rows(
    rows: list[CaptionRow],
    settings: CaptionMetricSettings,
    verdicts: dict[str, gpt_judges.Verdict] | None,
) -> dict[str, Any]:
    scored = score_captions([r.caption for r in rows], [r.references for r in rows], settings)
    per_object, tally, unjudged = [], gpt_judges.JudgeTally(), []
    for row, values in zip(rows, scored.per_object, strict=True):
        entry: dict[str, Any] = {"uid": row.uid, "caption": row.caption, **values}
        if verdicts is not None:
            target = row.judge_target()
            entry.update(gpt_judges.object_scores(target, verdicts, tally))
            entry["judge_references"] = sorted(row.judge_references)
            absent = gpt_judges.absent_verdict(target, verdicts)
            if absent is not None:  # not scored at all, as in `vidbench run`
                entry |= no_verdict_fields(row.uid, absent)
                unjudged.append(entry)
        per_object.append(entry)
    complete = [e for e in per_object if e.get("status") != NO_VERDICT]
    out: dict[str, Any] = {
        "columns": table.columns(complete, scored.corpus),
        "n_objects": len(complete),
        "errors": len(unjudged),
        "error_details": [
            {"id": e["uid"], "status": NO_VERDICT, "error": e["status_detail"]} for e in unjudged
        ],
        "corpus": scored.corpus,
        "metric_info": scored.info,
        "per_object": per_object,
    }
    if verdicts is not None:
        out["judgments"] = tally.as_dict()
        out["warnings"] = tally.warnings(lenient=settings.protocol != "official")
        out["judged_objects"] = {
            c: sum(1 for e in per_object if e.get(table.FIELD[c]) is not None)
            for c in ("GPT-Appearance", "GPT-Action")
        }
    return out


def score_caption_files(options: CaptionScoring, console: Console) -> dict[str, Any]:
    if not options.pred and not options.human:
        raise ConfigError("score-captions: give --pred PRED.jsonl, --human, or both")
    metrics = _metrics(options.metrics, options.judge)
    settings = CaptionMetricSettings(
        protocol=options.protocol,
        metrics=tuple(m for m in metrics if m != "gpt"),
        cider_df=options.cider_df,
        bert_model=options.bert_model,
        bert_layers=options.bert_layers,
        sbert_model=options.sbert_model,
        sbert_runtime=options.sbert_runtime,
        device=options.device,
    )
    check_models(settings)  # every metric model and the device, before any work
    refs_path, out_path = options.refs, options.out
    refs = read_references(refs_path)
    preds = read_predictions(options.pred) if options.pred else Read()
    if options.pred:
        _cross_check(preds, refs, refs_path)
    mode = settings.judge_references
    row_sets = {}
    if options.pred:
        row_sets["model"] = model_rows(preds.items, refs.items, mode)
    if options.human:
        row_sets["human"] = human_rows(refs.items, mode, options.human_seed)
    for issue in [*refs.issues, *preds.issues]:
        console.print(f"[yellow]skipped[/] {escape(str(issue))}", highlight=False)
    verdicts, judge_info = None, {"used": False, "why": "no --judge given: GPT columns empty"}
    if "gpt" in metrics:
        all_rows = [r for rows in row_sets.values() for r in rows]
        verdicts, judge_info = _judge(all_rows, settings, options, out_path.parent, console)
        judge_info["used"] = True
    rows_out = {name: _score_rows(rows, settings, verdicts) for name, rows in row_sets.items()}
    main = rows_out.get("model") or rows_out["human"]
    result = {
        "columns": main["columns"],
        "column_order": list(table.COLUMNS),
        "scale": "CIDEr..SBERT: mean x100; GPT-*: mean of 0..5 scores; GPT-Eval: their mean",
        "protocol": settings.protocol,
        "settings": settings.as_dict(),
        "judge": judge_info,
        "inputs": {
            "predictions": str(options.pred) if options.pred else None,
            "references": str(refs_path),
            "n_predictions_read": len(preds.items) + sum(preds.counts().values()),
            "n_scored": len(row_sets.get("model", [])),
            "n_reference_objects": len(refs.items),
            "skipped": {"predictions": preds.counts(), "references": refs.counts()},
            "skipped_details": [str(i) for i in [*refs.issues, *preds.issues]],
        },
        "human_seed": options.human_seed if options.human else None,
        "rows": rows_out,
    }
    write_json(out_path, result)
    print_scores(rows_out, console)
    for row in rows_out.values():
        for warning in row.get("warnings", []):
            console.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False)
    unjudged = sum(row["errors"] for row in rows_out.values())
    if unjudged:
        console.print(f"[red]{no_verdict_message(unjudged)}[/] (listed in error_details)")
    return result


def print_scores(rows_out: dict[str, Any], console: Console) -> None:
    grid = Table(title="4D-Bench captioning (Table 2)")
    grid.add_column("Row", justify="left")
    for column in (*table.COLUMNS, "n"):
        grid.add_column(column, justify="right")
    for name, row in rows_out.items():
        cells = [
            "—"
            if (v := row["columns"][c]) is None
            else f"{v:.3f}"
            if c in table.JUDGE_COLUMNS
            else f"{v:.1f}"
            for c in table.COLUMNS
        ]
        grid.add_row("Human" if name == "human" else "Model", *cells, str(row["n_objects"]))
    console.print(grid)
