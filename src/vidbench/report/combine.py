"""`vidbench report`: several runs of one task side by side, as in the paper's tables."""

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
    return json.loads(path.read_text())


def combine(paths: Sequence[Path], out_dir: Path | None, console: Console) -> list[dict[str, Any]]:
    results = [load_results(p) for p in paths]
    tasks = sorted({r["task"] for r in results})
    print_table(results, " / ".join(tasks), console)
    if out_dir is not None:
        write_tables(out_dir, results)
    return results
