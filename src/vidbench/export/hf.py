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
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.files import Json, not_text, write_json, write_text
from vidbench.core.records import Sample
from vidbench.export.construction import find_construction
from vidbench.export.request import (
    ORIGINAL,
    ConfigSummary,
    ExportedDataset,
    ExportRequest,
    ExportTask,
)
from vidbench.extras import require
from vidbench.media.decode import probe
from vidbench.tasks.exported import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    ROW_COLUMNS,
    SPLIT,
    ExportedTask,
    Manifest,
    leads_out,
    row_schema,
    sample_row,
)
from vidbench.tasks.problems import Loaded, Problem, check_all

if TYPE_CHECKING:
    import pyarrow as pa  # read untyped (pyproject: [tool.mypy])

VIDEOS = "videos"
CONSTRUCTION = "construction"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _arrow_type(values: list[Json]) -> pa.DataType | None:
    """The Arrow type of a metadata field's values (numbers stay numbers, lists and records
    keep their shape); None when they have none in common (the field is then JSON text)."""
    import pyarrow as pa

    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return None
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {str}:
        return pa.string()
    if kinds <= {int, float} and any(
        isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX for v in values
    ):
        return None  # past what an Arrow integer (or a float, exactly) holds: JSON text
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    try:
        kind = pa.array(values).type
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    return None if pa.types.is_null(kind) else kind


def _schema(samples: Sequence[Sample]) -> tuple[pa.Schema, dict[str, str], set[str]]:
    """The rows' schema: ROW_COLUMNS, then a column per field of the source's records (a field
    named like a row column as `original_<name>`: the gold as given beside the resolved letter;
    fields whose name starts with "_" are vidbench's own and stay in `metadata` only); the
    column of each field; and the columns written as JSON text (values of no common type)."""
    import pyarrow as pa

    columns = list(row_schema())
    extra, as_json = {}, set()
    keys = dict.fromkeys(k for s in samples for k in s.metadata)
    renamed = {key: ORIGINAL + key for key in keys if key in ROW_COLUMNS}
    taken = {*ROW_COLUMNS, *renamed.values()}
    for key in keys:
        values = [s.metadata.get(key) for s in samples]
        if key.startswith("_") or all(v is None for v in values):
            continue
        name = renamed.get(key, key)
        while key not in renamed and name in taken:  # a source field `original_answer` too
            name = ORIGINAL + name
        taken.add(name)
        kind = _arrow_type(values)
        if kind is None:
            as_json.add(name)
        extra[key] = name
        columns.append(pa.field(name, kind or pa.string()))
    return pa.schema(columns), extra, as_json


class _Videos:
    """Copies each video once into OUT/videos/, at its path under the folder of the source that
    holds them all (a benchmark's `videos/clip0.mp4` is OUT/videos/clip0.mp4)."""

    def __init__(self, source: Path, out: Path, paths: Sequence[Path]) -> None:
        self.source, self.out = source.absolute(), out
        inside = [p.absolute().parent for p in paths if p.absolute().is_relative_to(self.source)]
        self.root = Path(os.path.commonpath(inside)) if inside else self.source
        self.placed: dict[Path, str] = {}  # real file -> its path in OUT

    def place(self, path: Path) -> str:
        real = path.resolve()
        if real in self.placed:
            return self.placed[real]
        try:  # the path as the data names it (links not followed), under the videos' folder
            relative = path.absolute().relative_to(self.root).as_posix()
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
    schema, extra, as_json = _schema(samples)
    rows: list[dict[str, Json]] = []
    shown: set[str] = set()
    for sample in samples:
        paths = {view: videos.place(path) for view, path in sample.media.videos.items()}
        shown.update(paths.values())
        row = sample_row(sample, paths)
        for key, name in extra.items():
            value = sample.metadata.get(key)
            row[name] = json.dumps(value, ensure_ascii=False) if name in as_json else value
        rows.append(row)
    relative = f"data/{task.config}/{SPLIT}-00000-of-00001.parquet"
    (out / relative).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / relative)
    return ConfigSummary(
        task.task, len(rows), len(shown), relative, list(extra.values()), sorted(as_json)
    )


def _unreadable(path: Path) -> Problem | None:
    try:
        probe(path)  # demuxes, decodes nothing: a copy of a broken file would look fine
    except MediaError as e:
        return Problem("", path, f"unreadable video ({str(e).removeprefix(f'{path}: ')})")
    return None


def _unreadable_videos(tasks: Sequence[ExportTask]) -> dict[Path, str]:
    """Why each video of the tasks' samples that is there cannot be read, by real path (each
    file probed once, side by side)."""
    shown = {p.resolve() for t in tasks for s in t.loaded.items for p in s.media.videos.values()}
    there = sorted(p for p in shown if p.is_file())
    return {p.path: p.message for p in check_all(there, _unreadable, "checking videos")}


def _text_problem(sample: Sample) -> str | None:
    """Where a sample holds text that Parquet (UTF-8) cannot hold: half of a character, which a
    loader may pass on from a JSON "\\ud800" escape (a CSV cell holding a JSON list), or None."""
    own = {
        "id": sample.id, "question": sample.question, "options": sample.options,
        "answer": sample.answer, "references": sample.references, "rules": sample.rules,
    }  # fmt: skip
    fields = {**own, **{f"the field {k!r}": {k: v} for k, v in sample.metadata.items()}}
    for name, value in fields.items():
        what = not_text(json.dumps(value, ensure_ascii=False))
        if what is not None:
            return f"not UTF-8 text in {name} ({what})"
    return None


def _exportable(task: ExportTask, source: Path, unreadable: dict[Path, str]) -> ExportTask:
    """The task's samples that Parquet can hold whose videos are all there and readable (some
    loaders leave that to the run), and a problem for each of the others."""
    kept, bad = [], []
    for sample in task.loaded.items:
        found = (
            (p, "missing video" if not p.is_file() else unreadable.get(p.resolve()))
            for p in sample.media.videos.values()
        )
        first = next(((p, why) for p, why in found if why is not None), None)
        text = _text_problem(sample)
        if first is not None:
            bad.append(Problem(sample.id, first[0], first[1]))
        elif text is not None:
            bad.append(Problem(sample.id, source, text))
        else:
            kept.append(sample)
    return dataclasses.replace(task, loaded=Loaded(kept, [*task.loaded.problems, *bad]))


def _check_problems(request: ExportRequest) -> list[Problem]:
    """Every problem of the tasks' records; ConfigError listing them unless `skip_bad`, and
    also then when no record is left (an empty dataset would look like an export)."""
    problems = [p for t in request.tasks for p in t.loaded.problems]
    shown = "\n".join(f"  {p}" for p in problems[:20])
    shown += f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    if problems and not request.skip_bad:
        raise ConfigError(
            f"{request.source}: {len(problems)} record(s) cannot be exported:\n{shown}\n"
            "fix them (vidbench validate) or give --skip-bad to leave them out; the dataset card "
            "then lists them"
        )
    if not any(t.loaded.items for t in request.tasks):
        raise ConfigError(f"{request.source}: no record can be exported:\n{shown}")
    return problems


def _check_out(out: Path, source: Path) -> None:
    if out.resolve().is_relative_to(source.resolve()):  # a later export would read it back in
        raise ConfigError(f"{out} is inside the source folder {source}; export beside it")
    if out.is_symlink():  # the finished folder is renamed onto OUT: a link cannot take it
        raise ConfigError(f"{out} is a symbolic link; export into a new folder")
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

    _check_out(request.out, request.source)
    for task in request.tasks:  # data/<config>/ is a folder of OUT
        if leads_out(task.config) or "/" in task.config or task.config in ("", "."):
            raise ConfigError(
                f"{request.source}: the config name {task.config!r} (the benchmark's name) is "
                "not a folder name; name the benchmark without '/', '\\' or '..'"
            )
    unreadable = _unreadable_videos(request.tasks)
    exportable = [_exportable(t, request.source, unreadable) for t in request.tasks]
    request = dataclasses.replace(request, tasks=exportable)
    problems = _check_problems(request)
    # a task whose every record was left out is no config (the card lists its records)
    request = dataclasses.replace(request, tasks=[t for t in request.tasks if t.loaded.items])
    work = _new_folder(request.out)
    try:
        shown = [p for t in request.tasks for s in t.loaded.items for p in s.media.videos.values()]
        videos = _Videos(request.source, work, shown)
        configs = {t.config: _write_config(work, t, videos) for t in request.tasks}
        construction = find_construction(request.source)
        for relative, path in construction.files.items():
            (work / CONSTRUCTION / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / CONSTRUCTION / relative)
        for name, path in request.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / name)
        exported = ExportedDataset(request.out, configs, len(videos.placed), problems, construction)
        manifest = Manifest(
            format=FORMAT,
            version=FORMAT_VERSION,
            benchmark=request.benchmark,
            tasks={
                c.task: ExportedTask(config=name, split=SPLIT, files=[c.path], rows=c.rows)
                for name, c in configs.items()
            },
        )
        write_json(work / MANIFEST, manifest.model_dump())
        write_text(work / "README.md", card_text(request, exported))
        if request.out.exists():
            request.out.rmdir()  # an empty folder, checked above
        work.rename(request.out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return exported
