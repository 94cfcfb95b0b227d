"""The paper tables of the report as plain data for the page: the rows `vidbench report`
prints (report/tables.py, grouped by task and data as report/combine.py does), each cell with
its 95% interval and n, the best number of each column marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

from vidbench.report.combine import groups
from vidbench.report.schema import Results
from vidbench.report.tables import interval, rows, table_parts

CHANCE_LABEL = "random-choice (expected)"


class Cell(TypedDict):
    """A table cell: its text; a model's column also its number, interval and n, and whether
    it is the column's best."""

    text: str
    value: NotRequired[float | None]
    ci: NotRequired[str]
    n: NotRequired[int]
    best: NotRequired[bool]


class Row(TypedDict):
    label: str
    cells: list[Cell]


class TablePart(TypedDict):
    title: str
    header: list[str]
    rows: list[Row]


class Table(TypedDict):
    """One paper table of the page: its title and its parts."""

    title: str
    parts: list[TablePart]


def _cell(result: Results, column: str, text: str) -> Cell:
    ci = result.ci95.get(column)
    n = result.column_n.get(column)
    cell: Cell = {"text": text, "value": result.columns.get(column)}
    if ci:
        scale = (result.column_scale or {}).get(column)
        cell["ci"] = interval(ci, scale)
    if n is not None:
        cell["n"] = n
    return cell


def _part(results: Sequence[Results], title: str, columns: list[str]) -> TablePart:
    header, body = rows(results, columns)
    chance = [row for row in body if row[0] == CHANCE_LABEL]
    models = body[len(chance) :]
    table_rows: list[Row] = [
        {"label": row[0], "cells": [{"text": t} for t in row[1:]]} for row in chance
    ]
    for result, row in zip(results, models, strict=True):
        cells = [_cell(result, c, text) for c, text in zip(columns, row[1:], strict=False)]
        cells += [Cell(text=t) for t in row[1 + len(columns) :]]
        table_rows.append({"label": row[0], "cells": cells})
    for i in range(len(columns)):  # the best (highest) number per column, as the papers bold it
        values = [r["cells"][i].get("value") for r in table_rows[len(chance) :]]
        numbers = [v for v in values if isinstance(v, int | float)]
        for r in table_rows[len(chance) :]:
            r["cells"][i]["best"] = bool(numbers) and r["cells"][i].get("value") == max(numbers)
    return {"title": title, "header": header, "rows": table_rows}


def table_data(results: Sequence[Results]) -> list[Table]:
    """One table per (task, data) the runs share, one part per part of the paper's table."""
    grouped = groups(results)
    tables: list[Table] = []
    for (task, data), members in grouped.items():
        parts = [_part(members, title, columns) for title, columns in table_parts(members)]
        tables.append({"title": f"{task} — {data}" if len(grouped) > 1 else task, "parts": parts})
    return tables
