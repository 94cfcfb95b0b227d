"""The paper tables of the report as plain data for the page: the rows `vidbench report`
prints (report/tables.py, grouped by task and data as report/combine.py does), each cell with
its 95% interval and n, the best number of each column marked."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from vidbench.report.combine import groups
from vidbench.report.schema import Results
from vidbench.report.tables import incomplete_note, interval, row_labels, rows, table_parts
from vidbench.view.collect import told_apart


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


def _part(
    results: Sequence[Results], labels: Sequence[str], title: str, columns: list[str]
) -> TablePart:
    header, body = rows(results, columns, labels)
    chance = body[: len(body) - len(results)]  # the chance rows come first
    models = body[len(chance) :]
    table_rows: list[Row] = [
        {"label": row[0], "cells": [{"text": t} for t in row[1:]]} for row in chance
    ]
    for result, row in zip(results, models, strict=True):
        cells = [_cell(result, c, text) for c, text in zip(columns, row[1:], strict=False)]
        cells += [Cell(text=t) for t in row[1 + len(columns) :]]
        table_rows.append({"label": row[0], "cells": cells})
    # the best (highest) number per column, as the papers bold it: of the complete runs' rows
    model_rows = table_rows[len(chance) :]
    ranked = [not incomplete_note(result) for result in results]
    for i in range(len(columns)):
        values = [
            r["cells"][i].get("value")
            for r, in_race in zip(model_rows, ranked, strict=True)
            if in_race
        ]
        numbers = [v for v in values if isinstance(v, int | float) and math.isfinite(v)]
        for r, in_race in zip(model_rows, ranked, strict=True):
            value = r["cells"][i].get("value")
            r["cells"][i]["best"] = in_race and bool(numbers) and value == max(numbers)
    return {"title": title, "header": header, "rows": table_rows}


def table_data(results: Sequence[Results], folders: Sequence[Path]) -> list[Table]:
    """One table per (task, data) the runs share, one part per part of the paper's table; rows
    that `vidbench report` would number (one model twice) are named by the runs' `folders`, as
    the page's list of runs names them."""
    folder_of = {id(r): folder for r, folder in zip(results, folders, strict=True)}
    grouped = groups(results)
    tables: list[Table] = []
    for (task, data), members in grouped.items():
        labels = row_labels(members, number_repeats=False)
        labels = told_apart(labels, [folder_of[id(r)] for r in members])
        parts = [_part(members, labels, title, columns) for title, columns in table_parts(members)]
        tables.append({"title": f"{task} — {data}" if len(grouped) > 1 else task, "parts": parts})
    return tables
