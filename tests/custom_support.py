"""Declared benchmarks the tests write: clips (PyAV), rows in every supported format, and the
`vidbench` command run in this process."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vidbench.cli import main
from vidbench.media.encode import write_mp4

ISSUE_TOML = """name = "my-bench"
rows = "questions.jsonl"          # .jsonl, .json, .csv or .parquet
video = "videos/{video_id}.mp4"   # a path template over the row's fields
question = "question"             # the field holding the question
options = "options"               # a list, an object, or "A. ..." strings
answer = "answer"                 # a letter, an index or the option's text
groups = ["domain"]               # one table column per value of each field
kind = "multiple-choice"          # or "open-ended"
frames = 8
"""


def write_clip(path: Path, shade: int, frames: int = 8, size: int = 32) -> Path:
    """A small mp4 whose frames are grey `shade`, brightening a little frame by frame."""
    write_mp4(
        path, [np.full((size, size, 3), (shade + 4 * t) % 256, np.uint8) for t in range(frames)]
    )
    return path


def write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """`rows` in the format `path`'s suffix names (lists and objects as JSON text in CSV)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(list(rows), indent=1), encoding="utf-8")
    elif suffix == ".csv":
        names = list(dict.fromkeys(k for r in rows for k in r))
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, names)
            writer.writeheader()
            for r in rows:
                writer.writerow(
                    {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in r.items()}
                )
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(list(rows)), path)
    else:
        raise ValueError(suffix)
    return path


# Six questions over three clips, two domains; gold answers A, B, C, D, A, B.
ROWS = [
    {
        "video_id": f"clip{i % 3}",
        "question": f"What happens in clip {i % 3} (question {i})?",
        "options": [f"A. event {i}a", f"B. event {i}b", f"C. event {i}c", f"D. event {i}d"],
        "answer": "ABCD"[i % 4],
        "domain": "kitchen" if i < 4 else "garden",
    }
    for i in range(6)
]


def make_bench(
    root: Path,
    toml: str = ISSUE_TOML,
    rows: Sequence[dict] = ROWS,
    rows_file: str = "questions.jsonl",
) -> Path:
    """A declared benchmark folder: benchmark.toml, the rows, clip0..clip2."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        write_clip(root / "videos" / f"clip{i}.mp4", 40 + 60 * i)
    write_rows(root / rows_file, rows)
    (root / "benchmark.toml").write_text(toml, encoding="utf-8")
    return root


def predictions(path: Path, answers: dict[str, str]) -> str:
    """A `predictions:FILE` model spec answering each sample id as given."""
    path.write_text("".join(json.dumps({"id": k, "answer": v}) + "\n" for k, v in answers.items()))
    return f"predictions:{path}"


def vidbench(*args: str | Path) -> int:
    return main(["--no-progress", *map(str, args)])


def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())


def samples(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}
