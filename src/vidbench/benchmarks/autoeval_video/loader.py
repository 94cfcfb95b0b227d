"""AutoEval-Video loader (AutoEval-Video paper; layout in this benchmark's README.md).

<data>/AUTO-EVAL-VIDEO.json   JSON Lines, one instance a line:
    {ID, Question, Rule, Dimension, "Video URL", Theme, "Start time", "End time"}
<data>/video/<ID>.mp4         the clip, already cut to Start..End (what the release ships)
<data>/full/<YouTube id>.mp4  optional full-length videos: an instance without a clip is cut out
                              of its full video by seeking to its Start..End window

`--data` may name the folder or the rules file itself. Bad rows become problems naming the line,
the ID and what is wrong; they never stop a load.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from vidbench.core.errors import DataError
from vidbench.core.files import json_lines
from vidbench.core.records import MediaRef, Sample, repeated_records
from vidbench.scoring.rule_judge import ANSWER_MARKER
from vidbench.tasks.problems import Loaded, Problem

RULES_FILE = "AUTO-EVAL-VIDEO.json"
CLIP_DIR = "video"
FULL_DIR = "full"
MARKER = ANSWER_MARKER  # where the judged answer goes in a Rule (scoring/rule_judge.py)

# Table 6's column order; this benchmark's README.md gives the released counts.
DIMENSIONS = (
    "Dynamic Perception",
    "State Transitions Perception",
    "Comparison Reasoning",
    "Reasoning with External Knowledge",
    "Explanatory Reasoning",
    "Predictive Reasoning",
    "Description",
    "Counterfactual Reasoning",
    "Camera Movement Perception",
)
RELEASED_COUNTS = {
    "Reasoning with External Knowledge": 80,
    "Explanatory Reasoning": 66,
    "Dynamic Perception": 46,
    "State Transitions Perception": 32,
    "Predictive Reasoning": 32,
    "Description": 30,
    "Comparison Reasoning": 19,
    "Counterfactual Reasoning": 19,
    "Camera Movement Perception": 3,
}
_REQUIRED = ("ID", "Question", "Rule", "Dimension", "Start time", "End time")
_TIME = re.compile(r"^(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d+)?)$")


def parse_time(value: object) -> float:
    """Seconds from "H:MM:SS", "M:SS" or "SS" (fractions allowed) or a number of seconds."""
    if isinstance(value, bool):
        raise DataError(f"time {value!r} is not a time")
    if isinstance(value, int | float):
        if value < 0:
            raise DataError(f"time {value!r} is negative")
        return float(value)
    if not isinstance(value, str) or not (match := _TIME.match(value.strip())):
        raise DataError(f"time {value!r}: expected H:MM:SS, M:SS or seconds")
    first, second, seconds = match.groups()
    parts = [int(p) for p in (first, second) if p is not None]
    if any(p >= 60 for p in parts[1:]) or (parts and float(seconds) >= 60):
        raise DataError(f"time {value!r}: minutes and seconds must be below 60")
    total = float(seconds)
    for scale, part in zip((60, 3600), reversed(parts), strict=False):
        total += scale * part
    return total


def youtube_id(url: object) -> str | None:
    """The video id of a YouTube URL (watch?v=, youtu.be/, /shorts/, /embed/), or None."""
    if not isinstance(url, str) or not url.strip():
        return None
    parsed = urlparse(url.strip().replace("\\/", "/"))
    if parsed.hostname and parsed.hostname.endswith("youtu.be"):
        return parsed.path.strip("/") or None
    found = parse_qs(parsed.query).get("v")
    if found:
        return found[0]
    parts = [p for p in parsed.path.split("/") if p]
    if len(parts) >= 2 and parts[0] in ("shorts", "embed", "v", "live"):
        return parts[1]
    return None


def resolve_rules(path: Path) -> Path:
    """The rules file: `path` itself, or AUTO-EVAL-VIDEO.json inside the folder `path`."""
    path = Path(path)
    candidate = path / RULES_FILE if path.is_dir() else path
    if not candidate.is_file():
        raise DataError(f"{path}: no {RULES_FILE} here (give the data folder or the rules file)")
    return candidate


@dataclass(frozen=True)
class RulesLine:
    """One line of the rules file: its line number and the parsed JSON value."""

    line: int
    value: Any

    @property
    def name(self) -> str:
        """How problems name the row: its ID when it has one, else its line."""
        if isinstance(self.value, dict) and "ID" in self.value:
            return str(self.value["ID"])
        return f"line {self.line}"


def read_rows(path: Path) -> tuple[list[RulesLine], list[Problem]]:
    """The JSON Lines rows of a rules file; a line that is not JSON is a problem."""
    rows, problems = [], []
    for line in json_lines(path):
        if line.error is None:
            rows.append(RulesLine(line.number, line.value))
        else:
            problems.append(Problem(f"line {line.number}", path, line.error))
    return rows, problems


def instance_id(value: object) -> str:
    """An ID as the canonical string ("17"): integers or integer strings (as the official script's
    `int(data.get('ID'))`)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise DataError(f"ID {value!r} is not an integer")
    text = str(value).strip()
    if not text.lstrip("-").isdigit():
        raise DataError(f"ID {value!r} is not an integer")
    return str(int(text))


def media_for(data_dir: Path, sample_id: str, url: Any, start: float, end: float) -> MediaRef:
    """The clip when it exists; else the full-length video cut to Start..End; else the (missing)
    clip path, which fails with a MediaError naming it when frames are read."""
    clip = data_dir / CLIP_DIR / f"{sample_id}.mp4"
    if clip.is_file():
        return MediaRef.single(clip)
    video = youtube_id(url)
    full = data_dir / FULL_DIR / f"{video}.mp4" if video else None
    if full is not None and full.is_file():
        return MediaRef.single(full, start, end)
    return MediaRef.single(clip)


def _sample(row: RulesLine, data_dir: Path) -> Sample:
    """One row as a Sample; raises DataError(what is wrong) for a bad row."""
    obj = row.value
    if not isinstance(obj, dict):
        raise DataError("row is not a JSON object")
    missing = [k for k in _REQUIRED if k not in obj]
    if missing:
        raise DataError(f"missing fields {missing}")
    sample_id = instance_id(obj["ID"])
    for field in ("Question", "Rule"):
        if not isinstance(obj[field], str) or not obj[field].strip():
            raise DataError(f"{field!r} must be a non-empty string")
    count = obj["Rule"].count(MARKER)
    if count != 1:
        raise DataError(
            f"the Rule has {'no' if count == 0 else count} {MARKER!r} marker"
            f"{'' if count == 0 else 's'} (exactly one is needed to insert the answer)"
        )
    if obj["Dimension"] not in DIMENSIONS:
        raise DataError(f"unknown Dimension {obj['Dimension']!r} (one of {', '.join(DIMENSIONS)})")
    start, end = parse_time(obj["Start time"]), parse_time(obj["End time"])
    if end <= start:
        raise DataError(
            f"End time {obj['End time']!r} is not after Start time {obj['Start time']!r}"
        )
    return Sample(
        id=sample_id,
        benchmark="autoeval-video",
        kind="open",
        media=media_for(data_dir, sample_id, obj.get("Video URL"), start, end),
        question=obj["Question"],
        rules=obj["Rule"],
        metadata={
            "dimension": obj["Dimension"],
            "theme": obj.get("Theme"),
            "video_url": obj.get("Video URL"),
            "start_s": start,
            "end_s": end,
            "line": row.line,
        },
    )


def iter_instances(data: Path) -> Iterator[Sample | Problem]:
    """The instances of a rules file one at a time, in file order, each bad row's problem in
    its place; a repeated ID keeps its last row, at its first row's place, and each later copy
    is a problem (as a dict by ID keeps it). What is held is a row (plus the samples of IDs
    that repeat, and 8 bytes a row to find those: `repeated_records`), so a run over a large
    rules file holds a batch of its samples, never all. DataError here when there is no rules
    file."""
    path = resolve_rules(data)
    return _instances(path)


def _instances(path: Path) -> Iterator[Sample | Problem]:
    repeated, last = _repeated_ids(path)
    seen: dict[str, int] = {}  # the rows of repeated IDs read so far
    for row, made in _rows(path):
        if isinstance(made, Problem):
            yield made
            continue
        copies = repeated.get(made.id)
        if copies is None:
            yield made
            continue
        seen[made.id] = seen.get(made.id, 0) + 1
        if seen[made.id] == 1:
            yield last[made.id]
        else:
            yield Problem(
                made.id,
                path,
                f"line {row.line}: duplicate ID (also line {copies[seen[made.id] - 2]}); the last "
                "is used, as a dict by ID keeps it",
            )


def _rows(path: Path) -> Iterator[tuple[RulesLine, Sample | Problem]]:
    """Each row of the rules file as a sample, or the problem that it is."""
    for line in json_lines(path):
        row = RulesLine(line.number, line.value)
        if line.error is not None:
            yield row, Problem(f"line {line.number}", path, line.error)
            continue
        try:
            yield row, _sample(row, path.parent)
        except DataError as e:
            where = "" if row.name == f"line {row.line}" else f"line {row.line}: "
            yield row, Problem(row.name, path, f"{where}{e}")


def _repeated_ids(path: Path) -> tuple[dict[str, list[int]], dict[str, Sample]]:
    """The IDs that more than one good row has, with the lines of their rows, and each one's
    last row's sample (`repeated_records`: read without holding the rows)."""
    return repeated_records(_good_rows(path), lambda: _good_rows(path))


def _good_rows(path: Path) -> Iterator[tuple[str, int, Sample]]:
    return ((made.id, row.line, made) for row, made in _rows(path) if isinstance(made, Sample))


def load(data: Path) -> Loaded[Sample]:
    """Every instance of a rules file (`iter_instances`, all at once); bad rows and repeated IDs
    become problems."""
    return Loaded.gathered(iter_instances(data))
