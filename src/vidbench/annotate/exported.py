"""What an export wrote: the file, how many records, and what was left out and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Exported:
    path: Path
    written: int = 0
    left_out: list[str] = field(default_factory=list)  # "id: why"
    then: str = ""  # what to do with the file, when the benchmark needs a step to read it
