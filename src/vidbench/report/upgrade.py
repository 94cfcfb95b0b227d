"""Files written before the typed schema (no `schema_version`): today's shape, derived from what
they hold, so results directories of older runs still load, show, compare and re-report.

- run.json: the same fields; the place settings some versions kept (`progress`, `ray`,
  `ray_workers`, `ray_rate`) are left out, as run.json leaves them out today.
- samples.jsonl: not upgraded (a row is a task's typed score now): the score stage writes it
  again from the run's store.
- results.json: the same fields; columns were rounded then, and where the file kept them
  unrounded (MMWorld's `columns_unrounded`) those exact values are the columns.

A file with a `schema_version` is returned as it is.
"""

from __future__ import annotations

from pydantic import JsonValue

from vidbench.core.errors import DataError
from vidbench.report.schema import SCHEMA_VERSION

# Where a run ran, kept in run.json by some older versions (no part of what it evaluated).
OLD_PLACE_KEYS = ("progress", "ray", "ray_workers", "ray_rate")


def upgrade_run(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    if "schema_version" in data:
        return data
    kept = {k: v for k, v in data.items() if k not in OLD_PLACE_KEYS}
    return {"schema_version": SCHEMA_VERSION, **kept}


def refuse_unversioned_sample(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """A samples.jsonl row written before the typed schema cannot be read as a task's score:
    DataError saying how to score the run again (its store keeps every answer)."""
    if "schema_version" not in data:
        raise DataError(
            "a row written before the typed schema (no schema_version): score the run again "
            "from its store with `vidbench run --out DIR --stage score`"
        )
    return data


def upgrade_results(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    if "schema_version" in data:
        return data
    exact = data.get("columns_unrounded") or {}
    columns = data.get("columns")
    if isinstance(columns, dict) and isinstance(exact, dict):
        columns = {c: exact[c] if exact.get(c) is not None else v for c, v in columns.items()}
    return {"schema_version": SCHEMA_VERSION, **data, "columns": columns}
