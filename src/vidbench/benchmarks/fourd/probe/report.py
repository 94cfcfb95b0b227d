"""What one probe build left in DIR: objects rendered and failed, questions generated, kept
and dropped (with the reasons), and the render timings (build.py fills it, output.py writes
its funnel and card)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from vidbench.benchmarks.fourd.curate.manifest import AssetProblem


@dataclass
class ProbeReport:
    """What one build left in DIR."""

    objects: int = 0
    rendered: list[str] = field(default_factory=list)
    failed: list[AssetProblem] = field(default_factory=list)  # redone by the next run
    generated: int = 0  # questions of the rendered objects
    kept: int = 0
    dropped: list[AssetProblem] = field(default_factory=list)  # questions whose evidence is hidden
    missing: list[AssetProblem] = field(
        default_factory=list
    )  # subtasks an object has no question of
    timings: list[dict] = field(default_factory=list)  # per object rendered by this run

    def reasons(self) -> Counter:
        """Dropped questions per reason."""
        return Counter(p.reason for p in self.dropped)
