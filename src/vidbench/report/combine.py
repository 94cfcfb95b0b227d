"""`vidbench report`: several runs side by side, as in the paper's tables; runs of different
tasks or data get a table each (their columns and samples are not the same)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from vidbench.core.errors import ConfigError
from vidbench.report.results_dir import ResultsDir, write_tables
from vidbench.report.tables import print_table


def load_results(path: Path) -> dict[str, Any]:
    """A results directory's results, or a results.json file given by its path."""
    if path.is_dir():
        return ResultsDir(path).read_results()
    if not path.is_file():
        raise ConfigError(f"{path}: not found (run the report stage first)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # unreadable, not UTF-8, not JSON
        raise ConfigError(f"{path}: not a results.json ({e})") from None
    if not isinstance(results, dict):
        raise ConfigError(f"{path}: not a results.json (not a JSON object)")
    return results


def groups(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Results by (task without its variants, data): the ones that can share a table."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        key = (str(r["task"]).partition(":")[0], str(r.get("data")))
        grouped.setdefault(key, []).append(r)
    return grouped


def combine(paths: Sequence[Path], out_dir: Path | None, console: Console) -> list[dict[str, Any]]:
    results = [load_results(p) for p in paths]
    grouped = groups(results)
    for (task, data), members in grouped.items():
        print_table(members, f"{task} — {data}" if len(grouped) > 1 else task, console)
    if out_dir is not None:
        if len(grouped) == 1:
            write_tables(out_dir, results)
        else:  # one set of table files per task and data
            for i, members in enumerate(grouped.values(), start=1):
                write_tables(out_dir / f"table-{i}-{members[0]['task'].partition(':')[0]}", members)
    return results
