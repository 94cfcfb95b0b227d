"""Per-sample records -> results.json: the paper table's columns, intervals, errors, provenance."""

from __future__ import annotations

import platform
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

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
    records: Sequence[dict[str, Any]],
    extra: dict[str, Any] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    scored = [r for r in records if r.get("error") is None]
    failed = [r for r in records if r.get("error") is not None]
    values = task.column_values(scored)
    return {
        "task": task.name,
        "model": model.get("spec"),
        "model_identity": model,
        "protocol": task.protocol,
        "frame_spec": task.frame_spec.as_dict(),
        "generation": task.generation.as_dict(),
        "n": len(records),
        "n_scored": len(scored),
        "errors": len(failed),
        "errors_by_status": dict(Counter(r.get("status", "error") for r in failed)),
        "error_details": [
            {"id": r["id"], "status": r.get("status", "error"), "error": r["error"]} for r in failed
        ],
        "unparsed": sum(1 for r in scored if r.get("unparsed")),
        "columns": {c: _round(mean_percent(values[c])) for c in task.columns},
        "column_n": {c: len(values[c]) for c in task.columns},
        "ci95": {c: _round_pair(bootstrap_ci(values[c], seed=seed)) for c in task.columns},
        "versions": versions(),
        "git_commit": git_commit(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(extra or {}),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _round_pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [round(pair[0], 2), round(pair[1], 2)]
