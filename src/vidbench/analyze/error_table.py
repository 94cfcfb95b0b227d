"""The error-type distribution as a table, one row per run (model): terminal, Markdown, CSV.

A cell is the count and its share of the row's tagged wrong answers (those the judge gave a
type); the last columns say what could not be tagged (`unparsed`: no type after every attempt;
`failed`: judge call or frames failed), so a row never looks complete when it is not.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from vidbench.analyze.taxonomy import CODES
from vidbench.report.tables import markdown_table

if TYPE_CHECKING:
    from vidbench.analyze.errors import ErrorSummary

HEADER = ["Model", "Task", *CODES, "tagged", "unparsed", "failed", "wrong"]


def share(summary: ErrorSummary, code: str) -> float | None:
    """Percent of the row's tagged wrong answers with this type (None when none is tagged)."""
    tagged = summary["tagged"]
    return 100 * summary["counts"][code] / tagged if tagged else None


def _failed(summary: ErrorSummary) -> int:
    return summary["judge_errors"] + summary["media_errors"]


def rows(summaries: Sequence[ErrorSummary]) -> list[list[str]]:
    body = []
    for s in summaries:
        cells = []
        for code in CODES:
            pct = share(s, code)
            cells.append(f"{s['counts'][code]} ({pct:.0f}%)" if pct is not None else "—")
        totals = [s["tagged"], s["unparsed"], _failed(s), s["wrong"]]
        body.append([s["model"], s["task"], *cells, *map(str, totals)])
    return body


def to_markdown(summaries: Sequence[ErrorSummary]) -> str:
    return "\n".join(markdown_table(HEADER, rows(summaries))) + "\n"


def to_csv(summaries: Sequence[ErrorSummary]) -> str:
    """Counts and percents in separate columns, for spreadsheets."""
    out = io.StringIO()
    writer = csv.writer(out)
    pct_columns = [f"{c}_pct" for c in CODES]
    writer.writerow(
        ["model", "task", *CODES, *pct_columns, "tagged", "unparsed", "failed", "wrong", "run"]
    )
    for s in summaries:
        pcts = [share(s, c) for c in CODES]
        writer.writerow(
            [s["model"], s["task"], *(s["counts"][c] for c in CODES)]
            + ["" if p is None else f"{p:.2f}" for p in pcts]
            + [s["tagged"], s["unparsed"], _failed(s), s["wrong"], s["run"]]
        )
    return out.getvalue()


def print_errors(summaries: Sequence[ErrorSummary], console: Console) -> None:
    table = Table(title="error types of wrong answers (MMWorld paper, Figure 5)")
    for i, name in enumerate(HEADER):
        table.add_column(name, justify="left" if i < 2 else "right")
    for row in rows(summaries):
        table.add_row(*row)
    console.print(table)
