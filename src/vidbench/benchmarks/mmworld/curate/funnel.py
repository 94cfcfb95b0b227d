"""Funnel counts and tokens per stage: how many videos and questions each stage took in, gave
out and dropped (with the reasons), and what its model calls cost. Written to OUT/funnel.json
and printed as a table at the end of a run, so nothing dropped goes unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vidbench.core.files import write_json
from vidbench.runner.store import Store

FUNNEL_FILE = "funnel.json"
# prompt file name -> the stage that asks it (a prompt version is "LABEL/NAME.vN")
STAGE_OF_PROMPT = {
    "queries": "queries",
    "audio_questions": "generation",
    "visual_questions": "generation",
    "answer_check": "filter",
}


def tokens_by_stage(store: Store) -> dict[str, dict[str, int]]:
    """Requests and tokens in/out stored in this output folder, per stage (every run's)."""
    stages: dict[str, dict[str, int]] = {}
    for version, usage in store.call_usage_by_version().items():
        name = version.rpartition("/")[2].split(".v")[0]
        stage = STAGE_OF_PROMPT.get(name, "other")
        total = stages.setdefault(stage, {"requests": 0, "input_tokens": 0, "output_tokens": 0})
        for key, value in usage.items():
            total[key] += value
    return stages


@dataclass
class Funnel:
    """Counts per stage, in pipeline order."""

    stages: dict[str, Any] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def add(self, stage: str, counts: dict[str, Any]) -> None:
        self.stages[stage] = counts

    def write(self, out: Path, store: Store | None) -> dict[str, Any]:
        """OUT/funnel.json; tokens from the store (none when no model was asked)."""
        tokens = tokens_by_stage(store) if store is not None else {}
        data = {"stages": self.stages, "tokens": tokens, "problems": self.problems}
        write_json(out / FUNNEL_FILE, data, indent=1)
        return data

    def print(self, console: Console, tokens: dict[str, dict[str, int]]) -> None:
        table = Table(title="curation funnel")
        table.add_column("stage")
        table.add_column("counts")
        for stage, counts in self.stages.items():
            if counts and all(isinstance(v, dict) for v in counts.values()):  # per subset
                for subset, part in counts.items():
                    table.add_row(f"{stage} · {subset}", _flat(part))
            else:
                table.add_row(stage, _flat(counts))
        for stage, usage in tokens.items():
            table.add_row(
                f"tokens · {stage}",
                f"{usage['requests']} requests, {usage['input_tokens']} in, "
                f"{usage['output_tokens']} out",
            )
        console.print(table)


def _flat(counts: Any, prefix: str = "") -> str:
    """`a 3, b.c 2`: nested counts on one line, zeros and empty groups left out."""
    if not isinstance(counts, dict):
        return f"{prefix} {counts}".strip()
    parts = [
        _flat(v, f"{prefix}{k}" if not prefix else f"{prefix} · {k}") for k, v in counts.items()
    ]
    return ", ".join(p for p in parts if p and not p.endswith(" 0") and not p.endswith(" {}"))
