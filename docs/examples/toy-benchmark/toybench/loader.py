"""Reading a toy data folder: every row that loads becomes a Sample, every bad one a Problem
naming the row and the file, and the rest still load."""

from __future__ import annotations

import json
from pathlib import Path

from vidbench import DataError, Loaded, MediaRef, Problem, Sample

QUESTIONS = "toy_questions.json"
FIELDS = ("id", "question", "options", "answer", "shape", "video")


def load(data: Path) -> Loaded[Sample]:
    path = data / QUESTIONS
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # the whole file: nothing to load
        raise DataError(f"{path}: not a readable JSON list ({e})") from e
    samples, problems = [], []
    for number, row in enumerate(rows, 1):
        name = str(row.get("id", f"row {number}")) if isinstance(row, dict) else f"row {number}"
        missing = [f for f in FIELDS if not isinstance(row, dict) or f not in row]
        if missing:
            problems.append(Problem(name, path, f"missing {', '.join(missing)}"))
            continue
        video = data / row["video"]
        if not video.is_file():
            problems.append(Problem(name, video, "missing video"))
            continue
        samples.append(
            Sample(
                id=name,
                benchmark="toy",
                kind="mcq",
                media=MediaRef.single(video),
                question=row["question"],
                options=tuple(row["options"]),
                answer=row["answer"],
                metadata={"shape": row["shape"]},
            )
        )
    return Loaded(samples, problems)


def validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    """`vidbench validate toy DATA`: every problem, never stopping at the first."""
    return load(root).problems
