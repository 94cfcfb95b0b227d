"""A task's results gathered a batch of scores at a time, so that scoring 100,000 samples holds
none of their rows.

`ColumnTally` keeps each column's per-sample values (8 bytes a value, in the rows' order: a
mean over them is the same number, to the last bit, as over a list of every row); a task's
`ResultsTally` (Task.results_tally) counts what its own results.json fields need.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from array import array
from collections.abc import Mapping, Sequence

from vidbench.core.files import Json
from vidbench.scoring.outcome import SampleScore


class ColumnTally:
    """Each column's values, added a batch at a time (a column met first in a later batch
    starts then)."""

    def __init__(self) -> None:
        self._values: dict[str, array[float]] = {}

    def add(self, values: Mapping[str, Sequence[float]]) -> None:
        for column, numbers in values.items():
            self._values.setdefault(column, array("d")).extend(numbers)

    @property
    def values(self) -> Mapping[str, Sequence[float]]:
        return self._values

    def percent(self, column: str) -> float | None:
        """The mean of the column's values in percent (None without values)."""
        numbers = self._values.get(column)
        return 100 * sum(numbers) / len(numbers) if numbers else None


class ResultsTally(ABC):
    """A task's own results.json fields (chance levels, counts behind its denominators), gathered
    from its scores a batch at a time: `add` sees each batch of scored rows once, in the data's
    order; `fields` gives the fields once every row is added."""

    @abstractmethod
    def add(self, scores: Sequence[SampleScore]) -> None: ...

    @abstractmethod
    def fields(self, values: Mapping[str, Sequence[float]]) -> Mapping[str, Json]:
        """The fields; `values`: each column's values over every row (what the task's
        `column_values` gives), e.g. to know which columns are shown."""
