"""The table a task reports: its columns in the paper's order, their scale, their grouping into
the paper's tables, and column groups shown only when the data has them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

PERCENT = 100.0


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    # Reported scale per column: the mean of the per-sample values times this factor (default
    # 100, percent; e.g. 1 for a 0..5 judge score).
    scale: Mapping[str, float] = field(default_factory=dict)
    # Titled parts, printed as separate tables (e.g. MMWorld's Table 3 and Table 4); empty: one.
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Titled column groups reported only when some record has a value for them (e.g. accuracy
    # by human-rated difficulty, for data that carries ratings).
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def all_columns(self) -> tuple[str, ...]:
        return (*self.columns, *(c for group in self.optional.values() for c in group))

    def scale_of(self, column: str) -> float:
        return self.scale.get(column, PERCENT)

    def _present(self, values: Mapping[str, Sequence[float]]) -> dict[str, tuple[str, ...]]:
        return {
            title: group
            for title, group in self.optional.items()
            if any(values.get(column) for column in group)
        }

    def shown_columns(self, values: Mapping[str, Sequence[float]]) -> tuple[str, ...]:
        """The columns to report for these per-column values."""
        present = self._present(values)
        return (*self.columns, *(c for group in present.values() for c in group))

    def shown_groups(self, values: Mapping[str, Sequence[float]]) -> dict[str, list[str]]:
        """The titled parts to print (none when the table is not split)."""
        if not self.groups:
            return {}
        return {t: list(g) for t, g in {**self.groups, **self._present(values)}.items()}
