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

import numpy as np

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
    scored = [r for r in records if not _failed(r)]
    failed = [r for r in records if _failed(r)]
    values = task.column_values(scored)
    table = task.table
    columns = table.shown_columns(values)
    groups = table.shown_groups(values)
    corpus = task.corpus_columns(scored)
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
            {"id": r["id"], "status": r.get("status", "error"), "error": _error(r)} for r in failed
        ],
        "unparsed": sum(1 for r in scored if r.get("unparsed")),
        **_unjudged(task, failed),
        "columns": {
            c: _round(corpus[c], 3) if c in corpus else _scaled_mean(values[c], table.scale_of(c))
            for c in columns
        },
        "column_n": {c: len(values[c]) for c in columns},
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


def _unjudged(task: Task, failed: Sequence[dict[str, Any]]) -> dict[str, int]:
    """For judged tasks, the answers a new judge stage can still decide (a failed or missing
    judge call): `no_verdict_message` tells the user to run it."""
    if not task.uses_judge:
        return {}
    return {"unjudged": sum(1 for r in failed if r.get("verdict_absent"))}


def _failed(record: dict[str, Any]) -> bool:
    """No answer (`error` set), or a task marked the answer unscorable by its `status` (e.g.
    MMWorld's `judge`: the judge's verdict failed), explained in `status_detail`."""
    return record.get("error") is not None or record.get("status", "ok") != "ok"


def _error(record: dict[str, Any]) -> str:
    return record.get("error") or record.get("status_detail") or str(record.get("status"))


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _scaled_mean(values: Sequence[float], scale: float) -> float | None:
    """Mean in percent (2 decimals), or times `scale` (3 decimals, e.g. 3.507 on a 0..5 scale)."""
    if scale == 100:
        return _round(mean_percent(values))
    return _round(None if not len(values) else float(np.mean(values)) * scale, 3)


def _scaled_ci(values: Sequence[float], scale: float, seed: int) -> list[float] | None:
    pair = bootstrap_ci(values, seed=seed)
    if scale == 100 or pair is None:
        return _round_pair(pair)
    low, high = (x * scale / 100 for x in pair)
    return [round(low, 3), round(high, 3)]


def _round_pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [round(pair[0], 2), round(pair[1], 2)]
