"""Sample rows -> results.json: the paper table's columns, intervals, errors, provenance, every
number at full precision (report/tables.py rounds where a table is shown)."""

from __future__ import annotations

import platform
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from vidbench.report.schema import SCHEMA_VERSION, Results, SampleRow
from vidbench.scoring.stats import bootstrap_ci, mean_percent
from vidbench.tasks.base import Task

_PACKAGES = ("vidbench", "av", "numpy", "pillow")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def git_commit() -> str | None:
    """The commit of the vidbench checkout this code runs from (None when not a checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def build_results(
    task: Task,
    model: dict[str, Any],
    rows: Sequence[SampleRow],
    extra: dict[str, Any] | None = None,
    seed: int = 0,
) -> Results:
    """The results of scored rows, every number at full precision (tables round them)."""
    scored = [row for row in rows if not row.failed]
    failed = [row for row in rows if row.failed]
    values = task.column_values(scored)
    table = task.table
    columns = table.shown_columns(values)
    groups = table.shown_groups(values)
    corpus = task.corpus_columns(scored)
    return Results.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "task": task.name,
            "model": model.get("spec"),
            "model_identity": model,
            "protocol": task.protocol,
            "frame_spec": task.frame_spec.as_dict(),
            "generation": task.generation.as_dict(),
            "n": len(rows),
            "n_scored": len(scored),
            "errors": len(failed),
            "errors_by_status": dict(Counter(row.status for row in failed)),
            "error_details": [
                {"id": row.id, "status": row.status, "error": _error(row)} for row in failed
            ],
            "unparsed": sum(1 for row in rows if not row.failed and row.unparsed),
            **_unjudged(task, failed),
            "columns": {
                c: corpus[c] if c in corpus else _scaled_mean(values[c], table.scale_of(c))
                for c in columns
            },
            "column_n": {c: len(values[c]) for c in columns},
            "column_scale": {c: table.scale_of(c) for c in columns},
            "ci95": {
                c: None if c in corpus else _scaled_ci(values[c], table.scale_of(c), seed)
                for c in columns
            },
            **({"column_groups": groups} if groups else {}),
            "versions": versions(),
            "git_commit": git_commit(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **task.extra_results(scored),
            **(extra or {}),
        }
    )


def _unjudged(task: Task, failed: Sequence[SampleRow]) -> dict[str, int]:
    """For judged tasks, the answers a new judge stage can still decide (a failed or missing
    judge call): `no_verdict_message` tells the user to run it."""
    if not task.uses_judge:
        return {}
    return {"unjudged": sum(1 for row in failed if row.verdict_absent)}


def _error(row: SampleRow) -> str:
    return row.error or row.status_detail or row.status


def _scaled_mean(values: Sequence[float], scale: float) -> float | None:
    """Mean in percent, or times `scale` (e.g. 3.507 on a 0..5 scale); unrounded."""
    if scale == 100:
        return mean_percent(values)
    return None if not len(values) else float(np.mean(values)) * scale


def _scaled_ci(values: Sequence[float], scale: float, seed: int) -> list[float] | None:
    """The 95% bootstrap interval in the column's unit; unrounded."""
    pair = bootstrap_ci(values, seed=seed)
    if pair is None:
        return None
    if scale == 100:
        return [pair[0], pair[1]]
    return [pair[0] * scale / 100, pair[1] * scale / 100]
