"""`vidbench report`: several runs of one task side by side, as in the paper's tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from vidbench.core.errors import ConfigError
from vidbench.report.tables import print_table, to_csv, to_markdown


def load_results(path: Path) -> dict[str, Any]:
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise ConfigError(f"{file}: not found (run the report stage first)")
    return json.loads(file.read_text())


def combine(paths: Sequence[Path], out_dir: Path | None, console: Console) -> list[dict[str, Any]]:
    results = [load_results(p) for p in paths]
    tasks = sorted({r["task"] for r in results})
    print_table(results, " / ".join(tasks), console)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "table.md").write_text(to_markdown(results))
        (out_dir / "table.csv").write_text(to_csv(results))
    return results
