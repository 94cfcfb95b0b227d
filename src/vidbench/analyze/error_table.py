"""The error-type distribution as a table, one row per run (model): terminal, Markdown, CSV.

A cell is the count and its share of the row's tagged wrong answers (those the judge gave a
type); the last columns say what could not be tagged (`unparsed`: no type after every attempt;
`failed`: judge call or frames failed, or the sample is gone from the data), so a row never
looks complete when it is not.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from vidbench.analyze.taxonomy import CODES
from vidbench.console import roomy
from vidbench.report.tables import markdown_table, terminal_table

if TYPE_CHECKING:
    from vidbench.analyze.errors import ErrorSummary

# not scored: the run's samples counted neither right nor wrong (no answer, no verdict): an
# incomplete run's wrong answers are those of the samples it scored
HEADER = ["Model", "Task", *CODES, "tagged", "unparsed", "failed", "wrong", "not scored"]


def share(summary: ErrorSummary, code: str) -> float | None:
    """Percent of the row's tagged wrong answers with this type (None when none is tagged)."""
    tagged = summary["tagged"]
    return 100 * summary["counts"][code] / tagged if tagged else None


def failed(summary: ErrorSummary) -> int:
    """Wrong answers without a type for want of one: a failed judge call, unreadable frames, or
    a sample no longer in the data (`missing_samples`) or not the one answered
    (`changed_samples`); the next run asks the first two again."""
    gone = len(summary["missing_samples"]) + len(summary["changed_samples"])
    return summary["judge_errors"] + summary["media_errors"] + gone


def labels(summaries: Sequence[ErrorSummary]) -> list[str]:
    """Each row's model; rows of one model and task (two runs of one model name) also name
    their run's folder, so they are told apart."""
    keys = Counter((s["model"], s["task"]) for s in summaries)
    return [
        s["model"] + (f" ({s['run']})" if keys[s["model"], s["task"]] > 1 else "")
        for s in summaries
    ]


def rows(summaries: Sequence[ErrorSummary]) -> list[list[str]]:
    body = []
    for s, label in zip(summaries, labels(summaries), strict=True):
        cells = []
        for code in CODES:
            pct = share(s, code)
            cells.append(f"{s['counts'][code]} ({pct:.0f}%)" if pct is not None else "—")
        totals = [s["tagged"], s["unparsed"], failed(s), s["wrong"], s["not_scored"]]
        body.append([label, s["task"], *cells, *map(str, totals)])
    return body


def to_markdown(summaries: Sequence[ErrorSummary]) -> str:
    return "\n".join(markdown_table(HEADER, rows(summaries))) + "\n"


def to_csv(summaries: Sequence[ErrorSummary]) -> str:
    """Counts and percents in separate columns, for spreadsheets."""
    out = io.StringIO()
    writer = csv.writer(out)
    pct_columns = [f"{c}_pct" for c in CODES]
    totals = ["tagged", "unparsed", "failed", "wrong", "not_scored"]
    writer.writerow(["model", "task", *CODES, *pct_columns, *totals, "run"])
    for s in summaries:
        pcts = [share(s, c) for c in CODES]
        writer.writerow(
            [s["model"], s["task"], *(s["counts"][c] for c in CODES)]
            + ["" if p is None else f"{p:.2f}" for p in pcts]
            + [s["tagged"], s["unparsed"], failed(s), s["wrong"], s["not_scored"], s["run"]]
        )
    return out.getvalue()


def print_errors(summaries: Sequence[ErrorSummary], console: Console) -> None:
    title = "error types of wrong answers (MMWorld paper, Figure 5)"
    roomy(console).print(terminal_table(title, HEADER, rows(summaries), left=(0, 1)))
