"""`vidbench judge-agreement`: how often the judge agrees with human verdicts (AutoEval-Video paper
section 4.3, Table 3), overall, per subset (the labels' `subset`, e.g. which model answered) and
per dimension, with a confusion matrix and a bootstrap interval.

OUT/
  store.sqlite            the judge's replies (never requested again)
  agreement_items.jsonl   one line per label: human and judge verdicts, reasoning, counted
  agreement.json          the statistics below, the judge, prompt and protocol
A verdict that never parses follows the protocol: `drop` leaves the label out, `wrong` counts the
judge as saying 0. A failed judge call leaves the label out and is listed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.benchmarks.autoeval_video.inputs import Label, read_labels
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import Json, as_int
from vidbench.core.records import Sample
from vidbench.models.registry import ModelChoice
from vidbench.report.results import git_commit, versions
from vidbench.report.results_dir import ResultsDir
from vidbench.runner.commands import rejected_advice
from vidbench.runner.model_calls import ask_judge
from vidbench.runner.store import Store
from vidbench.scoring.agreement import Agreement, binary_agreement
from vidbench.scoring.judge import no_verdict_message
from vidbench.scoring.model_call import ModelCall
from vidbench.scoring.outcome import SampleScore
from vidbench.scoring.rule_judge import Judgment


@dataclass
class AgreementJob:
    rules: Path
    labels: Path
    out: Path
    judge: ModelChoice
    prompt: JudgePrompt
    seed: int = 0
    progress: bool = True


class AgreementItem(TypedDict):
    """One label of agreement_items.jsonl: the human's and the judge's verdicts."""

    item: str
    id: str
    dimension: str | None
    subset: str | None
    answer: str
    human: int
    judge: int | None
    agree: bool | None  # None: not counted
    judge_status: JsonValue
    reason: JsonValue
    judge_reply: str | None
    attempts: JsonValue
    counted: bool


class AgreementError(TypedDict):
    item: str
    error: str


class AgreementReport(TypedDict):
    """agreement.json."""

    labels_file: str
    rules_file: str
    judge: Mapping[str, Json]
    judge_prompt: str
    judge_protocol: Mapping[str, Json]
    n_labels: int
    n_counted: int
    n_dropped: int
    n_unparsed: int
    n_unjudged: int  # labels whose judge call failed: left out, asked again by a rerun
    n_refused: int  # labels whose judge call was refused: left out until what it names changes
    errors: list[AgreementError]
    overall: Agreement
    by_subset: dict[str, Agreement]
    by_dimension: dict[str, Agreement]
    seed: int
    versions: dict[str, str]
    git_commit: str | None


def _item(label: Label, dimension: str | None, score: SampleScore) -> AgreementItem:
    counted = score.outcome.graded
    judge = as_int(score.details["verdict"])
    if judge is None and counted:  # an unparsed verdict under the `wrong` policy
        judge = 0
    return {
        "item": label.item,
        "id": label.id,
        "dimension": dimension,
        "subset": label.subset,
        "answer": label.answer,
        "human": label.human,
        "judge": judge,
        "agree": None if not counted else judge == label.human,
        "judge_status": score.details["judge_status"],
        "reason": score.details["reason"],
        "judge_reply": score.judge_reply,
        "attempts": score.details["attempts"],
        "counted": counted,
    }


def _groups(
    items: Sequence[AgreementItem], seed: int
) -> tuple[Agreement, dict[str, Agreement], dict[str, Agreement]]:
    """Agreement overall, by subset and by dimension (counted labels only)."""
    pairs = [(i, (i["human"], i["judge"] or 0)) for i in items if i["counted"]]
    subsets: dict[str, list[tuple[int, int]]] = defaultdict(list)
    dimensions: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for item, pair in pairs:
        if item["subset"] is not None:
            subsets[item["subset"]].append(pair)
        if item["dimension"] is not None:
            dimensions[item["dimension"]].append(pair)
    return (
        binary_agreement([pair for _, pair in pairs], seed),
        {k: binary_agreement(v, seed) for k, v in sorted(subsets.items())},
        {
            d: binary_agreement(dimensions[d], seed)
            for d in autoeval_video.DIMENSIONS
            if d in dimensions
        },
    )


# A label, its rule, and the call that asks the judge about it (None: an empty answer counted
# wrong without asking).
Asked = tuple[Label, Sample, ModelCall[Judgment] | None]


def _calls(
    job: AgreementJob, labels: Sequence[Label], errors: list[AgreementError]
) -> tuple[list[ModelCall[Judgment]], dict[str, Asked]]:
    loaded = autoeval_video.load(job.rules)
    samples = {s.id: s for s in loaded.items}
    bad_rules = {p.record: f" ({p})" for p in loaded.problems}
    calls: list[ModelCall[Judgment]] = []
    asked: dict[str, Asked] = {}
    for label in labels:
        sample = samples.get(label.id)
        if sample is None:
            reason = bad_rules.get(label.id, "")
            errors.append({"item": label.item, "error": f"ID {label.id}: no usable rule{reason}"})
            continue
        if rules.is_empty(label.answer) and job.prompt.protocol.empty == "wrong":
            asked[label.item] = (label, sample, None)
            continue
        try:
            calls.append(job.prompt.call(label.item, sample, label.answer))
        except (DataError, ConfigError) as e:
            errors.append({"item": label.item, "error": str(e)})
            continue
        asked[label.item] = (label, sample, calls[-1])
    return calls, asked


def judge_agreement(job: AgreementJob, console: Console) -> AgreementReport:
    labels, problems = read_labels(job.labels)
    errors = [AgreementError(item=p.record, error=str(p)) for p in problems]
    calls, asked = _calls(job, labels, errors)
    with Store(job.out) as store:
        verdicts, identity = ask_judge(
            job.judge, calls, store, job.prompt.protocol.attempts, job.progress, console
        )
    items: list[AgreementItem] = []
    for label, sample, call in asked.values():
        if call is None:
            score = rules.empty_outcome()
        else:
            verdict = verdicts[call.item]
            if verdict.status == "error":
                why = verdict.why_absent() if verdict.change_first else verdict.error
                errors.append({"item": label.item, "error": f"judge failed: {why}"})
            score = rules.outcome(verdict, job.prompt.protocol)
        dimension = sample.metadata.get("dimension")
        items.append(_item(label, None if dimension is None else str(dimension), score))
    for error in errors:
        console.print(f"[yellow]left out[/]: {escape(error['error'])}", highlight=False)
    refused = Counter(v.change_first for v in verdicts.values() if v.absent and v.change_first)
    unjudged = sum(1 for v in verdicts.values() if v.absent) - refused.total()
    if unjudged:
        console.print(f"[red]{no_verdict_message(unjudged)}[/]")
    if refused:
        console.print(f"[red]{escape(rejected_advice(refused))}[/]", highlight=False)
    overall, by_subset, by_dimension = _groups(items, job.seed)
    report: AgreementReport = {
        "labels_file": str(job.labels),
        "rules_file": str(job.rules),
        "judge": identity,
        "judge_prompt": job.prompt.kind,
        "judge_protocol": job.prompt.protocol.as_dict(),
        "n_labels": len(labels) + len(problems),
        "n_counted": sum(1 for i in items if i["counted"]),
        "n_dropped": sum(1 for i in items if i["judge_status"] == "unparsed" and not i["counted"]),
        "n_unparsed": sum(1 for i in items if i["judge_status"] == "unparsed"),
        "n_unjudged": unjudged,
        "n_refused": refused.total(),
        "errors": errors,
        "overall": overall,
        "by_subset": by_subset,
        "by_dimension": by_dimension,
        "seed": job.seed,
        "versions": versions(),
        "git_commit": git_commit(),
    }
    job.out.mkdir(parents=True, exist_ok=True)
    directory = ResultsDir(job.out)
    directory.write_records("agreement_items.jsonl", items)
    directory.write_json("agreement.json", report)
    print_agreement(console, report)
    return report


def print_agreement(console: Console, report: AgreementReport) -> None:
    table = Table(title=f"judge agreement with humans — {report['judge_prompt']} prompt")
    columns = ("group", "n", "agreement %", "95% CI", "kappa", "H1 J1", "H1 J0", "H0 J1", "H0 J0")
    for column in columns:
        table.add_column(column, justify="left" if column == "group" else "right")
    groups: list[tuple[str, Agreement]] = [("overall", report["overall"])]
    groups += [(f"subset {k}", v) for k, v in report["by_subset"].items()]
    groups += list(report["by_dimension"].items())
    for name, stats in groups:
        c = stats["confusion"]
        ci = stats["ci95"]
        table.add_row(
            name,
            str(stats["n"]),
            "—" if stats["agreement"] is None else f"{stats['agreement']:.1f}",
            "—" if ci is None else f"{ci[0]:.1f}–{ci[1]:.1f}",
            "—" if stats["kappa"] is None else f"{stats['kappa']:.3f}",
            str(c["human=1"]["judge=1"]),
            str(c["human=1"]["judge=0"]),
            str(c["human=0"]["judge=1"]),
            str(c["human=0"]["judge=0"]),
        )
    console.print(table)
