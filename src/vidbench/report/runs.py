"""Mean ± std over repeated runs (`vidbench run ... --runs N`), as MMWorld's Table 3 reports.

The spread is the population standard deviation (numpy's default, ddof=0) of the per-run column
values: it is what reproduces Table 3's "± std" from Table 6's three seeds (e.g. GPT-4o, Art &
Sports: 365/775, 361/775, 387/775 correct -> 47.87 ± 1.47, where the rounded per-seed
accuracies 47.10, 46.58, 49.94 would give 1.48): results.json keeps every run's columns
unrounded, and the means and spreads are kept so too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from vidbench.core.errors import ConfigError
from vidbench.report.schema import SCHEMA_VERSION, Results
from vidbench.report.tables import merged_groups

# Fields that are the same for every run and are carried over from the first.
_SHARED = (
    "task",
    "model",
    "protocol",
    "frame_spec",
    "generation",
    "column_n",
    "column_scale",
    "scoring",
    "column_groups",
    "chance",
    "data",
    "judge",
    "versions",
    "git_commit",
)


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and population standard deviation of the values present; unrounded."""
    present = [v for v in values if v is not None]
    if not present:
        return None, None
    return float(np.mean(present)), float(np.std(present))


def aggregate(results: Sequence[Results], dirs: Sequence[str]) -> Results:
    """One results for N runs: `columns` are the means, `std` the spreads, `runs` the per-run
    numbers (each run's columns are exact: results.json keeps them unrounded)."""
    if not results:
        raise ConfigError("no runs to aggregate")
    first = results[0]
    for other in results[1:]:
        if other.task != first.task:
            raise ConfigError(
                f"runs of different tasks cannot be averaged ({first.task}, {other.task})"
            )
    columns: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    # every run's columns: a column only some runs have (e.g. MMWorld's difficulty columns,
    # of the runs that scored rated samples) is the mean of those
    for column in dict.fromkeys(c for r in results for c in r.columns):
        columns[column], std[column] = mean_std([r.columns.get(column) for r in results])
    groups = merged_groups(results)
    shared = first.document() | ({"column_groups": groups} if groups else {})
    return Results.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            **{k: shared[k] for k in _SHARED if k in shared},
            "runs": len(results),
            "seeds": [r.seed for r in results],
            # n, errors, unparsed and truncated are all totals over the runs (per run: `per_run`)
            "n": sum(r.n for r in results),
            "columns": columns,
            "std": std,
            "errors": sum(r.errors for r in results),
            "errors_by_status": _sum_counts(r.errors_by_status for r in results),
            "error_details": [
                {**detail.model_dump(exclude_unset=True), "run": d}
                for r, d in zip(results, dirs, strict=True)
                for detail in r.error_details
            ],
            "unparsed": sum(r.unparsed for r in results),
            "truncated": sum(r.truncated for r in results),
            "per_run": [
                {
                    "dir": d,
                    "seed": r.seed,
                    "columns": r.columns,
                    "n": r.n,
                    "errors": r.errors,
                    "unparsed": r.unparsed,
                    "truncated": r.truncated,
                }
                for r, d in zip(results, dirs, strict=True)
            ],
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )


def _sum_counts(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for key, n in count.items():
            total[key] = total.get(key, 0) + n
    return total
