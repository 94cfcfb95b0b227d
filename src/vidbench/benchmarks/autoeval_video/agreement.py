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

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.benchmarks.autoeval_video.inputs import Label, read_labels
from vidbench.core.errors import ConfigError, DataError
from vidbench.models.registry import ModelChoice
from vidbench.report.results import git_commit, versions
from vidbench.report.results_dir import ResultsDir
from vidbench.runner.model_calls import ask_judge
from vidbench.runner.store import Store
from vidbench.scoring.agreement import binary_agreement
from vidbench.scoring.judge import no_verdict_message
from vidbench.scoring.model_call import ModelCall
from vidbench.scoring.outcome import SampleScore


@dataclass
class AgreementJob:
    rules: Path
    labels: Path
    out: Path
    judge: ModelChoice
    prompt: JudgePrompt
    seed: int = 0
    progress: bool = True


def _item(label: Label, dimension: str | None, score: SampleScore) -> dict[str, Any]:
    counted = score.outcome.graded
    judge = score.details["verdict"]
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


def _groups(items: Sequence[dict[str, Any]], seed: int) -> dict[str, Any]:
    counted = [i for i in items if i["counted"]]
    by: dict[str, dict[str, list[tuple[int, int]]]] = {
        "subset": defaultdict(list),
        "dimension": defaultdict(list),
    }
    for item in counted:
        pair = (item["human"], item["judge"])
        for field in ("subset", "dimension"):
            if item[field] is not None:
                by[field][item[field]].append(pair)
    return {
        "overall": binary_agreement([(i["human"], i["judge"]) for i in counted], seed),
        "by_subset": {k: binary_agreement(v, seed) for k, v in sorted(by["subset"].items())},
        "by_dimension": {
            d: binary_agreement(by["dimension"][d], seed)
            for d in autoeval_video.DIMENSIONS
            if d in by["dimension"]
        },
    }


def _calls(
    job: AgreementJob, labels: Sequence[Label], errors: list[dict[str, Any]]
) -> tuple[list[ModelCall], dict[str, Any]]:
    loaded = autoeval_video.load(job.rules)
    samples = {s.id: s for s in loaded.items}
    bad_rules = {p.record: f" ({p})" for p in loaded.problems}
    calls, asked = [], {}
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


def judge_agreement(job: AgreementJob, console: Console) -> dict[str, Any]:
    labels, problems = read_labels(job.labels)
    errors = [{"item": p.record, "error": str(p)} for p in problems]
    calls, asked = _calls(job, labels, errors)
    with Store(job.out) as store:
        verdicts, identity = ask_judge(
            job.judge, calls, store, job.prompt.protocol.attempts, job.progress, console
        )
    items = []
    for label, sample, call in asked.values():
        if call is None:
            score = rules.empty_outcome()
        else:
            verdict = verdicts[call.item]
            if verdict.status == "error":
                errors.append({"item": label.item, "error": f"judge failed: {verdict.error}"})
            score = rules.outcome(verdict, job.prompt.protocol)
        items.append(_item(label, sample.metadata["dimension"], score))
    for error in errors:
        console.print(f"[yellow]left out[/]: {escape(error['error'])}", highlight=False)
    unjudged = sum(1 for v in verdicts.values() if v.absent)
    if unjudged:
        console.print(f"[red]{no_verdict_message(unjudged)}[/]")
    report = {
        "labels_file": str(job.labels),
        "rules_file": str(job.rules),
        "judge": identity,
        "judge_prompt": job.prompt.kind,
        "judge_protocol": job.prompt.protocol.as_dict(),
        "n_labels": len(labels) + len(problems),
        "n_counted": sum(1 for i in items if i["counted"]),
        "n_dropped": sum(1 for i in items if i["judge_status"] == "unparsed" and not i["counted"]),
        "n_unparsed": sum(1 for i in items if i["judge_status"] == "unparsed"),
        "errors": errors,
        **_groups(items, job.seed),
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


def print_agreement(console: Console, report: dict[str, Any]) -> None:
    table = Table(title=f"judge agreement with humans — {report['judge_prompt']} prompt")
    columns = ("group", "n", "agreement %", "95% CI", "kappa", "H1 J1", "H1 J0", "H0 J1", "H0 J0")
    for column in columns:
        table.add_column(column, justify="left" if column == "group" else "right")
    groups = [("overall", report["overall"])]
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
            "—" if stats.get("kappa") is None else f"{stats['kappa']:.3f}",
            str(c["human=1"]["judge=1"]),
            str(c["human=1"]["judge=0"]),
            str(c["human=0"]["judge=1"]),
            str(c["human=0"]["judge=0"]),
        )
    console.print(table)
