"""The records a curation left beside its data, found for the dataset card of an export:

- `settings.json`: what built the questions (curate 4d qa, curate mmworld all);
- `render.json`: each object's render (curate 4d render): settings, status, frame range;
- `funnel.json`: what each stage took in, kept and dropped, and why.

They are found anywhere under the exported folder, links followed (a `curate 4d qa` output links
its videos to the render folder, where the render records are). Each is copied into the export
under `construction/` and summarised in the card.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from vidbench.tasks.exported import is_export

SETTINGS = "settings.json"
RENDER = "render.json"
FUNNEL = "funnel.json"
RECORDS = (SETTINGS, RENDER, FUNNEL)


@dataclass
class Construction:
    """Construction records by their path relative to the exported folder."""

    files: dict[str, Path] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # "path: why"

    def _read(self, name: str) -> dict[str, JsonValue]:
        found = {}
        for relative, path in sorted(self.files.items()):
            if Path(relative).name != name:
                continue
            try:
                found[relative] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                self.unreadable.append(f"{relative}: {e}")
        return found

    def settings(self) -> dict[str, JsonValue]:
        return self._read(SETTINGS)

    def funnels(self) -> dict[str, JsonValue]:
        return self._read(FUNNEL)

    def renders(self) -> list[dict[str, JsonValue]]:
        """The distinct render settings, each with its objects' count by status."""
        groups: dict[str, Counter[str]] = {}
        for record in self._read(RENDER).values():
            if not isinstance(record, dict):
                continue
            key = json.dumps(record.get("settings"), sort_keys=True)
            groups.setdefault(key, Counter())[str(record.get("status", "unknown"))] += 1
        return [
            {"settings": json.loads(key), "objects": dict(sorted(counts.items()))}
            for key, counts in groups.items()
        ]


def find_construction(root: Path) -> Construction:
    """Every construction record under `root` (links followed, each folder visited once), but
    those of an export kept under it (copies of records found here, or of another dataset's)."""
    found = Construction()
    seen: set[Path] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = Path(folder).resolve()
        if real in seen or (Path(folder) != root and is_export(Path(folder))):
            dirs[:] = []  # an export kept inside DIR holds copies of DIR's own records
            continue
        seen.add(real)
        dirs.sort()
        for name in sorted(files):
            if name in RECORDS:
                path = Path(folder) / name
                found.files[path.relative_to(root).as_posix()] = path
    return found
