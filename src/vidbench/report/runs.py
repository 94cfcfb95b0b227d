"""Mean ± std over repeated runs (`vidbench run ... --runs N`), as MMWorld's Table 3 reports.

The spread is the population standard deviation (numpy's default, ddof=0) of the per-run column
values: it is what reproduces Table 3's "± std" from Table 6's three seeds (e.g. GPT-4o, Art &
Sports: 365/775, 361/775, 387/775 correct -> 47.87 ± 1.47).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from vidbench.core.errors import ConfigError

# Fields that are the same for every run and are carried over from the first.
_SHARED = (
    "task",
    "model",
    "protocol",
    "frame_spec",
    "generation",
    "column_n",
    "scoring",
    "column_groups",
    "chance",
    "data",
    "judge",
    "versions",
    "git_commit",
)


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return None, None
    return round(float(np.mean(present)), 2), round(float(np.std(present)), 2)


def aggregate(results: Sequence[dict[str, Any]], dirs: Sequence[str]) -> dict[str, Any]:
    """One results dict for N runs: `columns` are the means, `std` the spreads, `runs` the
    per-run numbers."""
    if not results:
        raise ConfigError("no runs to aggregate")
    first = results[0]
    for other in results[1:]:
        if other["task"] != first["task"] or list(other["columns"]) != list(first["columns"]):
            raise ConfigError("runs of different tasks or columns cannot be averaged")
    columns: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    for column in first["columns"]:
        columns[column], std[column] = mean_std([_exact(r).get(column) for r in results])
    return {
        **{k: first[k] for k in _SHARED if k in first},
        "runs": len(results),
        "seeds": [r.get("seed") for r in results],
        # n, errors and unparsed are all totals over the runs (per run: `per_run`)
        "n": sum(r["n"] for r in results),
        "columns": columns,
        "std": std,
        "errors": sum(r["errors"] for r in results),
        "errors_by_status": _sum_counts(r.get("errors_by_status", {}) for r in results),
        "error_details": [
            {**detail, "run": d}
            for r, d in zip(results, dirs, strict=True)
            for detail in r.get("error_details", [])
        ],
        "unparsed": sum(r.get("unparsed", 0) for r in results),
        "per_run": [
            {
                "dir": d,
                "seed": r.get("seed"),
                "columns": r["columns"],
                "n": r["n"],
                "errors": r["errors"],
                "unparsed": r.get("unparsed", 0),
            }
            for r, d in zip(results, dirs, strict=True)
        ],
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _exact(result: dict[str, Any]) -> dict[str, float | None]:
    """A run's column values before rounding when the task records them (`columns_unrounded`):
    Table 3's spreads are computed from exact per-seed accuracies (GPT-4o Art & Sports: 1.47
    from 365/775, 361/775, 387/775; 1.48 from the rounded 47.10, 46.58, 49.94)."""
    return result.get("columns_unrounded") or result["columns"]


def _sum_counts(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for key, n in count.items():
            total[key] = total.get(key, 0) + n
    return total
