"""Paper-style tables from one or more results.json: terminal, Markdown and CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def _columns(results: Sequence[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for r in results:
        names.extend(c for c in r["columns"] if c not in names)
    return names


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def rows(results: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per result (model), the columns of the task's paper table."""
    columns = _columns(results)
    header = ["Model", *columns, "n", "errors", "unparsed"]
    body = [
        [
            r["model"],
            *(_cell(r["columns"].get(c)) for c in columns),
            str(r["n"]),
            str(r["errors"]),
            str(r.get("unparsed", 0)),
        ]
        for r in results
    ]
    return header, body


def to_markdown(results: Sequence[dict[str, Any]]) -> str:
    header, body = rows(results)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def to_csv(results: Sequence[dict[str, Any]]) -> str:
    header, body = rows(results)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()


def print_table(
    results: Sequence[dict[str, Any]], title: str, console: Console | None = None
) -> None:
    header, body = rows(results)
    table = Table(title=title)
    for i, name in enumerate(header):
        widest_word = max(len(word) for word in name.split())
        table.add_column(name, justify="left" if i == 0 else "right", min_width=widest_word)
    for row in body:
        table.add_row(*row)
    console = console or Console()
    if not console.is_terminal:  # logs and pipes: room for the whole table, no wrapped cells
        console = Console(file=console.file, width=max(console.width, 160))
    console.print(table)
