"""Files written before the typed schema (no `schema_version`): today's shape, derived from what
they hold, so results directories of older runs still load, show, compare and re-report.

- run.json: the same fields; the place settings some versions kept (`progress`, `ray`,
  `ray_workers`, `ray_rate`) are left out, as run.json leaves them out today.
- samples.jsonl: each row gets the `outcome` its fields say (scoring/outcome.derive_outcome:
  the report's sample browser read outcomes that way before tasks set them).
- results.json: the same fields; columns were rounded then, and where the file kept them
  unrounded (MMWorld's `columns_unrounded`) those exact values are the columns.

A file with a `schema_version` is returned as it is.
"""

from __future__ import annotations

from typing import Any

from vidbench.report.schema import SCHEMA_VERSION
from vidbench.scoring.outcome import derive_outcome

# Where a run ran, kept in run.json by some older versions (no part of what it evaluated).
OLD_PLACE_KEYS = ("progress", "ray", "ray_workers", "ray_rate")


def upgrade_run(data: dict[str, Any]) -> dict[str, Any]:
    if "schema_version" in data:
        return data
    kept = {k: v for k, v in data.items() if k not in OLD_PLACE_KEYS}
    return {"schema_version": SCHEMA_VERSION, **kept}


def upgrade_sample(data: dict[str, Any]) -> dict[str, Any]:
    if "schema_version" in data:
        return data
    outcome = derive_outcome(data).model_dump()
    return {"schema_version": SCHEMA_VERSION, **data, "outcome": outcome}


def upgrade_results(data: dict[str, Any]) -> dict[str, Any]:
    if "schema_version" in data:
        return data
    exact = data.get("columns_unrounded") or {}
    columns = data.get("columns")
    if isinstance(columns, dict) and isinstance(exact, dict):
        columns = {c: exact[c] if exact.get(c) is not None else v for c, v in columns.items()}
    return {"schema_version": SCHEMA_VERSION, **data, "columns": columns}
