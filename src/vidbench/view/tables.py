"""The paper tables of the report as plain data for the page: the rows `vidbench report`
prints (report/tables.py, grouped by task and data as report/combine.py does), each cell with
its 95% interval and n, the best number of each column marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vidbench.report.combine import groups
from vidbench.report.schema import Results
from vidbench.report.tables import interval, rows, table_parts

CHANCE_LABEL = "random-choice (expected)"


def _cell(result: Results, column: str, text: str) -> dict[str, Any]:
    ci = result.ci95.get(column)
    n = result.column_n.get(column)
    cell: dict[str, Any] = {"text": text, "value": result.columns.get(column)}
    if ci:
        scale = (result.column_scale or {}).get(column)
        cell["ci"] = interval(ci, scale)
    if n is not None:
        cell["n"] = n
    return cell


def _part(results: Sequence[Results], title: str, columns: list[str]) -> dict[str, Any]:
    header, body = rows(results, columns)
    chance = [row for row in body if row[0] == CHANCE_LABEL]
    models = body[len(chance) :]
    table_rows: list[dict[str, Any]] = [
        {"label": row[0], "cells": [{"text": t} for t in row[1:]]} for row in chance
    ]
    for result, row in zip(results, models, strict=True):
        cells = [_cell(result, c, text) for c, text in zip(columns, row[1:], strict=False)]
        cells += [{"text": t} for t in row[1 + len(columns) :]]
        table_rows.append({"label": row[0], "cells": cells})
    for i in range(len(columns)):  # the best (highest) number per column, as the papers bold it
        values = [r["cells"][i].get("value") for r in table_rows[len(chance) :]]
        numbers = [v for v in values if isinstance(v, int | float)]
        for r in table_rows[len(chance) :]:
            r["cells"][i]["best"] = bool(numbers) and r["cells"][i].get("value") == max(numbers)
    return {"title": title, "header": header, "rows": table_rows}


def table_data(results: Sequence[Results]) -> list[dict[str, Any]]:
    """One table per (task, data) the runs share, one part per part of the paper's table."""
    grouped = groups(results)
    tables = []
    for (task, data), members in grouped.items():
        parts = [_part(members, title, columns) for title, columns in table_parts(members)]
        tables.append({"title": f"{task} — {data}" if len(grouped) > 1 else task, "parts": parts})
    return tables
