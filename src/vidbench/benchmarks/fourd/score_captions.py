"""`vidbench score-captions`: Table 2 of 4D-Bench for captions produced elsewhere.

    vidbench score-captions --pred PRED.jsonl --refs human_annotations.csv --out SCORES.json \
        [--metrics bleu,meteor,rouge,cider,bert,sbert,gpt] [--judge SPEC] \
        [--protocol vidbench|official|coco] [--cider-df PATH] [--human]

A thin wrapper over the run's stages. Each row is a run of the `4dbench-caption` task whose
answers come from a file (the `predictions:FILE` model, no frame decoded), in a results
directory beside SCORES.json: `model/` for the captions given, `human/` for the Human row (each
object's held-out human caption, scored against its other four). The judge, score and report
stages are the run's; their judgments are stored there and never asked twice. What only this
command does: read the predictions record by record (bad records named and counted, the rest
scored) and gather both rows into SCORES.json.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from pydantic import JsonValue
from rich.console import Console
from rich.table import Table

from vidbench.benchmarks.fourd.caption_task import (
    CAPTION,
    REFERENCES,
    CaptionSource,
    FourDCaption,
)
from vidbench.benchmarks.fourd.captions import gpt_judges, table
from vidbench.benchmarks.fourd.captions.inputs import Read, read_predictions, read_references
from vidbench.benchmarks.fourd.captions.rows import HUMAN_SEED, held_out
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.core.errors import ConfigError
from vidbench.core.files import Json, write_json, write_jsonl
from vidbench.core.requests import GenerationConfig
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import Results, SampleRow
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.scoring.captions.metrics import (
    ALL_METRICS,
    AUTOMATIC,
    CaptionMetricSettings,
    check_models,
)
from vidbench.scoring.judge import no_verdict_message
from vidbench.tasks.problems import Problem

ROWS = ("model", "human")


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


def _metrics(text: str | None, judge: str | None) -> tuple[str, ...]:
    if text is None:
        return (*AUTOMATIC, "gpt") if judge else AUTOMATIC
    chosen = tuple(m.strip() for m in text.split(",") if m.strip())
    if not chosen:
        raise ConfigError(f"--metrics {text!r} names no metric; known: {', '.join(ALL_METRICS)}")
    if "gpt" in chosen and not judge:
        raise ConfigError("--metrics gpt needs an LLM judge: give --judge SPEC")
    return chosen


# a prediction for a uid the references do not have: it leaves no object out
UNKNOWN_UID = "unknown_uid"


def covers_every_object(scores: Scores) -> bool:
    """Whether every object of every row was scored (judged, with a judge): a row's errors
    other than predictions for unknown uids leave objects out."""
    return all(set(row["errors_by_status"]) <= {UNKNOWN_UID} for row in scores["rows"].values())


# an object of the references with no usable prediction: the model's row leaves it out
NO_PREDICTION = "no_prediction"


def _cross_check(
    preds: Read[str], refs: Read[tuple[str, ...]], refs_path: Path, pred_path: Path
) -> None:
    """Predictions whose uid has no usable references become issues (and are dropped), and so
    does every object of the references without a usable prediction (left out of the row)."""
    unusable = {i.problem.record: i for i in refs.issues}
    for uid in [u for u in preds.items if u not in refs.items]:
        del preds.items[uid]
        if uid in unusable:
            reason = unusable[uid].problem.message.removesuffix("; object skipped")
            preds.add_issue("missing_references", uid, refs_path, f"references unusable ({reason})")
        else:
            preds.add_issue(UNKNOWN_UID, uid, refs_path, "uid not in the references; not scored")
    named = {i.problem.record.split(" ")[0] for i in preds.issues}  # "UID (line N)": said
    for uid in sorted(set(refs.items) - set(preds.items) - named):
        preds.add_issue(NO_PREDICTION, uid, pred_path, "no usable prediction for this object")


def _judge_info(settings: CaptionMetricSettings, options: CaptionScoring) -> dict[str, Json]:
    official = settings.protocol == "official"
    generation = gpt_judges.OFFICIAL_GENERATION if official else gpt_judges.DEFAULT_GENERATION
    return {
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


class RowScores(TypedDict):
    """A row of SCORES.json (the model's captions, or the held-out human ones)."""

    columns: dict[str, float | None]
    n_objects: int | None
    errors: int
    errors_by_status: dict[str, int]
    error_details: JsonValue
    unjudged: int
    metric_info: dict[str, JsonValue]
    per_object: list[dict[str, Json]]
    judgments: NotRequired[dict[str, JsonValue]]
    warnings: NotRequired[list[str]]
    judged_objects: NotRequired[dict[str, int]]
    results_dir: NotRequired[str]


@dataclass(frozen=True)
class RowInput:
    name: str  # "model" or "human"
    captions: dict[str, str]  # uid -> the caption to score
    source: CaptionSource
    problems: list[Problem]  # predictions that could not be read, by record


def _rows(options: CaptionScoring, refs: Read[tuple[str, ...]], preds: Read[str]) -> list[RowInput]:
    rows = []
    if options.pred:
        problems = [
            Problem(i.problem.record, i.problem.path, i.problem.message, i.kind)
            for i in preds.issues
        ]
        source = CaptionSource(captions_given=True, objects=frozenset(preds.items))
        rows.append(RowInput("model", dict(preds.items), source, problems))
    if options.human:
        chosen = held_out(list(refs.items), seed=options.human_seed)
        captions = {uid: refs.items[uid][k - 1] for uid, k in chosen.items()}
        source = CaptionSource(captions_given=True, human_seed=options.human_seed)
        rows.append(RowInput("human", captions, source, []))
    return rows


def _run_row(
    row: RowInput,
    options: CaptionScoring,
    settings: CaptionMetricSettings,
    console: Console,
) -> RowScores:
    """One row through the run's stages, in OUT_DIR/<row>/; its results and records."""
    out = options.out.parent / row.name
    answers = out / "captions.jsonl"
    write_jsonl(answers, [{"uid": u, "caption": c} for u, c in sorted(row.captions.items())])
    name = "4dbench-caption" + (f":{settings.protocol}" if settings.protocol != "vidbench" else "")
    generation = GenerationConfig(temperature=0.0, max_tokens=512)
    task = FourDCaption(name, SPEC, generation, settings, "4dbench-caption", row.source)
    config = RunConfig(
        task=name,
        data=str(options.refs),
        model=f"predictions:{answers}",
        out=str(out),
        concurrency=options.concurrency,
        model_options={"name": row.name},
        judge=options.judge if "gpt" in _metrics(options.metrics, options.judge) else None,
        judge_options=dict(options.judge_options),
        judge_attempts=options.judge_attempts,
        progress=False,
    )
    Run(config, task, console, row.problems).run()
    directory = ResultsDir(out)
    scores = _row_summary(directory.read_results(), directory.read_samples())
    scores["results_dir"] = str(out)
    return scores


def _per_object(row: SampleRow) -> dict[str, Json]:
    """An object's scores as SCORES.json lists them: its caption, metrics and judgments."""
    absent = {"status_detail": row.status_detail, "verdict_absent": row.verdict_absent}
    return {
        "uid": row.id,
        "unparsed": row.unparsed,
        **{k: v for k, v in row.details.items() if k != REFERENCES},
        **row.metrics,
        **{k: v for k, v in absent.items() if v is not None},
    }


def _row_summary(results: Results, rows: list[SampleRow]) -> RowScores:
    """A row of SCORES.json from its run's results and samples."""
    per_object = [_per_object(row) for row in rows if CAPTION in row.details]
    document = results.document()
    found = document.get("caption_scoring")
    scoring = found if isinstance(found, dict) else {}
    row: RowScores = {
        "columns": results.columns,
        "n_objects": results.n_scored,
        "errors": results.errors,
        "errors_by_status": results.errors_by_status,
        "error_details": document["error_details"],
        "unjudged": results.unjudged or 0,
        "metric_info": {k: v for k, v in scoring.items() if k not in ("judgments",)},
        "per_object": per_object,
    }
    if results.judge:
        counted = scoring.get("judgments")
        judgments = counted if isinstance(counted, dict) else {}
        row["judgments"] = {s: judgments.get(s, 0) for s in gpt_judges.STATUSES}
        row["warnings"] = results.warnings or []
        row["judged_objects"] = {
            c: sum(1 for e in per_object if e.get(table.FIELD[c]) is not None)
            for c in ("GPT-Appearance", "GPT-Action")
        }
    return row


class Scores(TypedDict):
    """SCORES.json: the model's row (else the human one) up front, every row under `rows`."""

    columns: dict[str, float | None]
    column_order: list[str]
    scale: str
    protocol: str
    settings: dict[str, JsonValue]
    judge: dict[str, Json]
    inputs: dict[str, Json]
    human_seed: int | None
    rows: dict[str, RowScores]


def score_caption_files(options: CaptionScoring, console: Console) -> Scores:
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
    refs = read_references(options.refs)
    preds = read_predictions(options.pred) if options.pred else Read[str]()
    if options.pred:
        _cross_check(preds, refs, options.refs, options.pred)
    rows_out: dict[str, RowScores] = {}
    for row in _rows(options, refs, preds):
        rows_out[row.name] = _run_row(row, options, settings, console)
    judge_info: dict[str, Json] = {"used": False, "why": "no --judge given: GPT columns empty"}
    if "gpt" in metrics:
        judge_info = {"used": True, "model": _judge_identity(options)}
        judge_info |= _judge_info(settings, options)
    main = rows_out.get("model") or rows_out["human"]
    result: Scores = {
        "columns": main["columns"],
        "column_order": list(table.COLUMNS),
        "scale": "CIDEr..SBERT: mean x100; GPT-*: mean of 0..5 scores; GPT-Eval: their mean",
        "protocol": settings.protocol,
        "settings": settings.as_dict(),
        "judge": judge_info,
        "inputs": {
            "predictions": str(options.pred) if options.pred else None,
            "references": str(options.refs),
            "n_predictions_read": len(preds.items)
            + sum(n for kind, n in preds.counts().items() if kind != NO_PREDICTION),
            "n_scored": rows_out["model"]["n_objects"] if "model" in rows_out else 0,
            "n_reference_objects": len(refs.items),
            "skipped": {"predictions": preds.counts(), "references": refs.counts()},
            "skipped_details": [str(i) for i in [*refs.issues, *preds.issues]],
        },
        "human_seed": options.human_seed if options.human else None,
        "rows": rows_out,
    }
    write_json(options.out, result)
    print_scores(rows_out, console)
    unjudged = sum(row["unjudged"] for row in rows_out.values())
    if unjudged:
        console.print(f"[red]{no_verdict_message(unjudged)}[/] (listed in error_details)")
    return result


def _judge_identity(options: CaptionScoring) -> dict[str, JsonValue] | None:
    for name in ROWS:
        path = options.out.parent / name
        if (path / "results.json").is_file():
            return ResultsDir(path).read_results().judge
    return None


def print_scores(rows_out: dict[str, RowScores], console: Console) -> None:
    grid = Table(title="4D-Bench captioning (Table 2)")
    grid.add_column("")
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
