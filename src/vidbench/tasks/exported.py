"""A benchmark exported for the Hugging Face `datasets` library (`vidbench export DIR --to hf
OUT`, export/hf.py writes it; docs/export.md), and reading its samples back for `--data OUT`.

    OUT/README.md                           the dataset card (YAML: license, configs, splits)
    OUT/vidbench.json                       this manifest: the benchmark and, per task, its
                                            config, split and Parquet file
    OUT/data/<config>/test-00000-of-00001.parquet   one row per sample (ROW_COLUMNS first, then
                                            the metadata's plain fields as columns of their own)
    OUT/videos/...                          the videos, at the paths the rows name

A row holds everything a task reads from its Sample: the question, options, gold answer,
references, rules, the videos by view (paths relative to OUT), the window, and the loader's
metadata as JSON text (`metadata`), so a run on OUT asks the model exactly what a run on the
original data asks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vidbench.core.errors import DataError
from vidbench.core.records import MediaRef, Sample
from vidbench.extras import require
from vidbench.tasks.problems import Loaded, Problem

MANIFEST = "vidbench.json"
FORMAT = "vidbench-hf-export"
FORMAT_VERSION = 1
SPLIT = "test"
# The columns every exported row has, in this order.
ROW_COLUMNS = (
    "id",
    "benchmark",
    "kind",
    "question",
    "options",
    "answer",
    "references",
    "rules",
    "video",
    "views",
    "videos",
    "start_s",
    "end_s",
    "metadata",
)


def is_export(folder: Path) -> bool:
    return (Path(folder) / MANIFEST).is_file()


def sample_row(sample: Sample, video_paths: Mapping[int, str]) -> dict[str, Any]:
    """A Sample as an exported row; `video_paths`: its videos by view, relative to OUT."""
    views = sorted(video_paths)
    return {
        "id": sample.id,
        "benchmark": sample.benchmark,
        "kind": sample.kind,
        "question": sample.question,
        "options": list(sample.options),
        "answer": sample.answer,
        "references": list(sample.references),
        "rules": sample.rules,
        "video": video_paths[views[0]],
        "views": views,
        "videos": [video_paths[v] for v in views],
        "start_s": sample.media.start_s,
        "end_s": sample.media.end_s,
        "metadata": json.dumps(sample.metadata, ensure_ascii=False, sort_keys=True),
    }


def row_sample(row: Mapping[str, Any], root: Path) -> Sample:
    """An exported row as the Sample it was made from; DataError saying what is wrong."""
    missing = [c for c in ROW_COLUMNS if c not in row]
    if missing:
        raise DataError(f"the row lacks the columns {missing}")
    try:
        metadata = json.loads(row["metadata"] or "{}")
    except (TypeError, json.JSONDecodeError) as e:
        raise DataError(f"its metadata is not JSON ({e})") from None
    if len(row["views"] or ()) != len(row["videos"] or ()) or not row["videos"]:
        raise DataError("its views and videos do not pair up")
    videos = {int(v): root / p for v, p in zip(row["views"], row["videos"], strict=True)}
    for path in videos.values():
        if not path.is_file():
            raise DataError(f"missing video {path}")
    return Sample(
        id=str(row["id"]),
        benchmark=row["benchmark"],
        kind=row["kind"],
        media=MediaRef(videos, row["start_s"], row["end_s"]),
        question=row["question"],
        options=tuple(row["options"] or ()),
        answer=row["answer"],
        references=tuple(row["references"] or ()),
        rules=row["rules"],
        metadata=metadata,
    )


def read_manifest(folder: Path) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not a readable export manifest ({e})") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{path}: not a vidbench export manifest (format {FORMAT!r})")
    if manifest.get("version") != FORMAT_VERSION:
        raise DataError(
            f"{path}: export format version {manifest.get('version')!r}; this vidbench reads "
            f"version {FORMAT_VERSION}"
        )
    return manifest


def read_export(folder: Path, task: str) -> Loaded[Sample]:
    """The samples of `task` (a task base name, e.g. 4dbench-qa) in an export folder; a row
    that cannot be read (a missing video, broken metadata) is a Problem naming it."""
    require("reading an exported dataset", ["pyarrow"], "export")
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    manifest = read_manifest(folder)
    tasks = manifest.get("tasks", {})
    if task not in tasks:
        raise DataError(
            f"{folder}: an export of {manifest.get('benchmark')} holding "
            f"{', '.join(tasks) or 'no task'}; not {task}"
        )
    samples, problems = [], []
    for name in tasks[task]["files"]:
        path = folder / name
        try:
            rows = pq.read_table(path).to_pylist()
        except (OSError, pa.ArrowException) as e:
            raise DataError(f"{path}: not a readable Parquet file ({e})") from e
        for number, row in enumerate(rows, start=1):
            try:
                samples.append(row_sample(row, folder))
            except DataError as e:
                problems.append(Problem(str(row.get("id", f"row {number}")), path, str(e)))
    return Loaded(samples, problems)
