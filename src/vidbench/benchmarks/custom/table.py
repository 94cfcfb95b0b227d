"""A declared benchmark's table: Overall, then one column per value of each group field.

The values are the data's, so the columns are known only from the scored records: `GroupedTable`
reports every group column the records have values for (one field: the value is the column's
name; several: "field: value", one titled part per field).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from vidbench.scoring.outcome import SampleScore
from vidbench.tasks.table import Table

OVERALL = "Overall"
# a multiple-choice score's metric: the chance a random choice among its options is right
CHANCE = "chance"


def column_name(field: str, value: str, fields: Sequence[str]) -> str:
    return value if len(fields) == 1 else f"{field}: {value}"


def _natural(text: str) -> tuple[int | str, ...]:
    """Sort key putting "clip 2" before "clip 10"."""
    return tuple(int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", text))


@dataclass(frozen=True)
class GroupedTable(Table):
    group_fields: tuple[str, ...] = ()

    def _field_columns(self, values: Mapping[str, Sequence[float]]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {field: [] for field in self.group_fields}
        prefix = len(self.group_fields) > 1
        for column, column_values in values.items():
            if column in self.columns or not column_values:
                continue
            field = column.split(": ", 1)[0] if prefix else self.group_fields[0]
            if field in found:
                found[field].append(column)
        return {field: sorted(cols, key=_natural) for field, cols in found.items()}

    def shown_columns(self, values: Mapping[str, Sequence[float]]) -> tuple[str, ...]:
        grouped = self._field_columns(values) if self.group_fields else {}
        return (*self.columns, *(c for cols in grouped.values() for c in cols))

    def shown_groups(self, values: Mapping[str, Sequence[float]]) -> dict[str, list[str]]:
        if len(self.group_fields) < 2:
            return {}
        grouped = self._field_columns(values)
        return {OVERALL: [OVERALL], **{field: cols for field, cols in grouped.items() if cols}}


def _correct(score: SampleScore) -> float | None:
    return None if score.correct is None else float(score.correct)


def column_values(
    scores: Sequence[SampleScore],
    groups: Sequence[str],
    value: Callable[[SampleScore], float | None] = _correct,
) -> dict[str, list[float]]:
    """Per column, the `value` of each score that counts right or wrong (an unparsed reply under
    `unparsed = "drop"` is not counted; a score without a verdict has no value): by default
    1 for right, 0 for wrong."""
    values: dict[str, list[float]] = {OVERALL: []}
    for score in scores:
        number = value(score)
        if not score.outcome.graded or number is None:
            continue
        values[OVERALL].append(number)
        for field in groups:
            if field in score.groups:
                name = column_name(field, score.groups[field], groups)
                values.setdefault(name, []).append(number)
    return values
