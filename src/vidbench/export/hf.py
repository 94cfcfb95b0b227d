"""`vidbench export DIR --to hf OUT`: a benchmark's data as a folder the Hugging Face `datasets`
library loads (offline, or once pushed to the Hub), and that `vidbench run TASK --data OUT` reads
back (tasks/exported.py holds the layout and the reader).

Each task with data in DIR (4D-Bench's QA and captions, MMWorld's subsets, a declared benchmark)
is one config of one `test` split: its samples as Parquet rows, the videos they show copied
under OUT/videos/ (each file once, at its path under DIR), the curation's records under
OUT/construction/, and the dataset card (card.py). The folder is written under a temporary name
beside OUT and renamed when complete, so a failed export leaves nothing that looks finished.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.files import write_json, write_text
from vidbench.core.records import Sample
from vidbench.export.construction import find_construction
from vidbench.export.request import ConfigSummary, ExportedDataset, ExportRequest, ExportTask
from vidbench.extras import require
from vidbench.tasks.exported import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    ROW_COLUMNS,
    SPLIT,
    sample_row,
)
from vidbench.tasks.problems import Loaded, Problem

VIDEOS = "videos"
CONSTRUCTION = "construction"


def _arrow_type(values: list[Any]) -> Any:
    """The Arrow type of a metadata field whose values are all plain of one kind, else None."""
    import pyarrow as pa

    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return None
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {str}:
        return pa.string()
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    return None


def _schema(samples: Sequence[Sample]) -> tuple[Any, dict[str, str]]:
    """The rows' schema: ROW_COLUMNS, then a column per plain metadata field whose name is not
    a row column's nor starts with "_" (all of them stay in `metadata`); and field -> column."""
    import pyarrow as pa

    base = {
        "options": pa.list_(pa.string()),
        "references": pa.list_(pa.string()),
        "views": pa.list_(pa.int64()),
        "videos": pa.list_(pa.string()),
        "start_s": pa.float64(),
        "end_s": pa.float64(),
    }
    columns = [pa.field(name, base.get(name, pa.string())) for name in ROW_COLUMNS]
    extra = {}
    keys = dict.fromkeys(k for s in samples for k in s.metadata)
    for key in keys:
        if key in ROW_COLUMNS or key.startswith("_"):
            continue
        kind = _arrow_type([s.metadata.get(key) for s in samples])
        if kind is not None:
            extra[key] = key
            columns.append(pa.field(key, kind))
    return pa.schema(columns), extra


class _Videos:
    """Copies each video once into OUT/videos/, at its path under the source folder."""

    def __init__(self, source: Path, out: Path) -> None:
        self.source, self.out = source, out
        self.placed: dict[Path, str] = {}  # real file -> its path in OUT

    def place(self, path: Path) -> str:
        real = path.resolve()
        if real in self.placed:
            return self.placed[real]
        try:  # the path as the data names it (links not followed), under the source folder
            relative = path.absolute().relative_to(self.source.absolute()).as_posix()
        except ValueError:  # outside the source folder: a folder per original place
            digest = hashlib.sha256(str(real).encode()).hexdigest()[:12]
            relative = f"_external/{digest}/{path.name}"
        target = f"{VIDEOS}/{relative}"
        (self.out / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real, self.out / target)
        self.placed[real] = target
        return target


def _write_config(out: Path, task: ExportTask, videos: _Videos) -> ConfigSummary:
    import pyarrow as pa
    import pyarrow.parquet as pq

    samples = task.loaded.items
    schema, extra = _schema(samples)
    rows: list[dict[str, Any]] = []
    shown: set[str] = set()
    for sample in samples:
        paths = {view: videos.place(path) for view, path in sample.media.videos.items()}
        shown.update(paths.values())
        row = sample_row(sample, paths)
        row.update({name: sample.metadata.get(key) for key, name in extra.items()})
        rows.append(row)
    relative = f"data/{task.config}/{SPLIT}-00000-of-00001.parquet"
    (out / relative).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / relative)
    return ConfigSummary(task.task, len(rows), len(shown), relative, list(extra.values()))


def _with_videos(task: ExportTask) -> ExportTask:
    """The task's samples whose videos are all there (some loaders leave that to the run), and
    a problem for each of the others."""
    kept, missing = [], []
    for sample in task.loaded.items:
        gone = [p for p in sample.media.videos.values() if not p.is_file()]
        if gone:
            missing.append(Problem(sample.id, gone[0], "missing video"))
        else:
            kept.append(sample)
    return ExportTask(task.config, task.task, Loaded(kept, [*task.loaded.problems, *missing]))


def _check_problems(request: ExportRequest) -> list[Problem]:
    problems = [p for t in request.tasks for p in t.loaded.problems]
    if problems and not request.skip_bad:
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ConfigError(
            f"{request.source}: {len(problems)} record(s) cannot be exported:\n{shown}{more}\n"
            "fix them (vidbench validate) or give --skip-bad to leave them out; the dataset card "
            "then lists them"
        )
    return problems


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} exists and is not an empty folder; export into a new one")


def _new_folder(out: Path) -> Path:
    """A temporary folder beside OUT, renamed to OUT once the export is complete."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.partial-"))


def export_hf(request: ExportRequest) -> ExportedDataset:
    """Write the dataset folder; ConfigError (and nothing written) on bad records unless
    `skip_bad`, which leaves them out and lists them in the card."""
    require("vidbench export --to hf", ["pyarrow", "yaml"], "export")
    from vidbench.export.card import card_text

    _check_out(request.out)
    request = dataclasses.replace(request, tasks=[_with_videos(t) for t in request.tasks])
    problems = _check_problems(request)
    work = _new_folder(request.out)
    try:
        videos = _Videos(request.source, work)
        configs = {t.config: _write_config(work, t, videos) for t in request.tasks}
        construction = find_construction(request.source)
        for relative, path in construction.files.items():
            (work / CONSTRUCTION / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / CONSTRUCTION / relative)
        for name, path in request.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / name)
        exported = ExportedDataset(request.out, configs, len(videos.placed), problems, construction)
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "benchmark": request.benchmark,
            "tasks": {
                c.task: {"config": name, "split": SPLIT, "files": [c.path], "rows": c.rows}
                for name, c in configs.items()
            },
        }
        write_json(work / MANIFEST, manifest)
        write_text(work / "README.md", card_text(request, exported))
        if request.out.exists():
            request.out.rmdir()  # an empty folder, checked above
        work.rename(request.out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return exported
