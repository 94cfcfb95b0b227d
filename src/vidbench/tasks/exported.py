"""A benchmark exported for the Hugging Face `datasets` library (`vidbench export DIR --to hf
OUT`, export/hf.py writes it; docs/export.md), and reading its samples back for `--data OUT`.

    OUT/README.md                           the dataset card (YAML: license, configs, splits):
                                            not read back, but checked (`card_problem`)
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

import fnmatch
import json
import re
import string
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError
from rich.markup import escape

from vidbench.console import err
from vidbench.core.errors import DataError
from vidbench.core.files import Json
from vidbench.core.records import MediaRef, Sample, SampleKind
from vidbench.extras import require
from vidbench.tasks.problems import Loaded, Problem

if TYPE_CHECKING:
    import pyarrow as pa  # read untyped (pyproject: [tool.mypy])

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


def row_schema() -> pa.Schema:
    """The Arrow types of ROW_COLUMNS, as an export writes them and a reader expects them."""
    import pyarrow as pa

    types = {
        "options": pa.list_(pa.string()),
        "references": pa.list_(pa.string()),
        "views": pa.list_(pa.int64()),
        "videos": pa.list_(pa.string()),
        "start_s": pa.float64(),
        "end_s": pa.float64(),
    }
    return pa.schema([pa.field(name, types.get(name, pa.string())) for name in ROW_COLUMNS])


def is_export(folder: Path) -> bool:
    return (Path(folder) / MANIFEST).is_file()


class ExportedRow(BaseModel):
    """The ROW_COLUMNS of an exported row, of the types sample_row writes (its other columns,
    the metadata's plain fields, are read from `metadata`)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    benchmark: str
    kind: SampleKind
    question: str | None
    options: list[str] | None
    answer: str | None
    references: list[str] | None
    rules: str | None
    views: list[int] | None
    videos: list[str] | None
    start_s: float | None
    end_s: float | None
    metadata: str | None


def sample_row(sample: Sample, video_paths: Mapping[int, str]) -> dict[str, Json]:
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


def leads_out(relative: str) -> bool:
    """Whether a path an export names (relative to OUT) leads out of OUT: absolute, or up."""
    path = PurePosixPath(relative)
    return path.is_absolute() or ".." in path.parts or "\\" in relative


def row_sample(columns: Mapping[str, object], root: Path) -> Sample:
    """An exported row as the Sample it was made from; DataError saying what is wrong."""
    missing = [c for c in ROW_COLUMNS if c not in columns]
    if missing:
        raise DataError(f"the row lacks the columns {missing}")
    try:
        row = ExportedRow.model_validate(columns)
    except ValidationError as e:
        raise DataError(f"a column is not what an export writes ({e.errors()[0]['msg']})") from None
    try:
        metadata = json.loads(row.metadata or "{}")
    except json.JSONDecodeError as e:
        raise DataError(f"its metadata is not JSON ({e})") from None
    if not isinstance(metadata, dict):
        raise DataError("its metadata is not a JSON object")
    options = tuple(row.options or ())
    if row.kind == "mcq" and options and row.answer is not None:
        letters = string.ascii_uppercase[: len(options)]
        # an edited gold would be scored as it is; MMWorld's letters are lower case
        if row.answer not in (*letters, *letters.lower()):
            raise DataError(
                f"its answer {row.answer!r} is no option letter ({letters[0]}-{letters[-1]})"
            )
    views, files = row.views or [], row.videos or []
    if len(views) != len(files) or not files or len(set(views)) != len(views):
        raise DataError("its views and videos do not pair up (one video per view)")
    outside = [p for p in files if leads_out(p)]
    if outside:  # a row must not make vidbench read (and show a model) files elsewhere
        raise DataError(f"its video path {outside[0]!r} is outside the export folder")
    videos = {v: root / p for v, p in zip(views, files, strict=True)}
    for path in videos.values():
        if not path.is_file():
            raise DataError(f"missing video {path}")
    return Sample(
        id=row.id,
        benchmark=row.benchmark,
        kind=row.kind,
        media=MediaRef(videos, row.start_s, row.end_s),
        question=row.question,
        options=options,
        answer=row.answer,
        references=tuple(row.references or ()),
        rules=row.rules,
        metadata=metadata,
    )


class ExportedTask(BaseModel):
    """A task of an export: its dataset config, split, Parquet files and rows."""

    config: str
    split: str
    files: list[str]
    rows: int


class Manifest(BaseModel):
    """OUT/vidbench.json."""

    format: str
    version: int
    benchmark: str
    tasks: dict[str, ExportedTask]


def read_manifest(folder: Path) -> Manifest:
    path = Path(folder) / MANIFEST
    try:
        manifest: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not a readable export manifest ({e})") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{path}: not a vidbench export manifest (format {FORMAT!r})")
    if manifest.get("version") != FORMAT_VERSION:
        raise DataError(
            f"{path}: export format version {manifest.get('version')!r}; this vidbench reads "
            f"version {FORMAT_VERSION}"
        )
    try:
        return Manifest.model_validate(manifest)
    except ValidationError as e:
        raise DataError(f"{path}: not a vidbench export manifest ({e})") from None


def _column_problem(schema: pa.Schema) -> str | None:
    """What is wrong with a Parquet file's ROW_COLUMNS (one missing, one of another type: a
    number where the export wrote the gold letter would be scored as that text), or None."""
    import pyarrow as pa

    for wanted in row_schema():
        if wanted.name not in schema.names:
            return f"it lacks the column {wanted.name!r}"
        found = schema.field(wanted.name).type
        if found != wanted.type and found != pa.null():  # null: every value empty
            return f"its column {wanted.name!r} is {found}, where an export writes {wanted.type}"
    return None


CARD = "README.md"
_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)---\n", re.DOTALL)


def card_problem(folder: Path, manifest: Manifest) -> str | None:
    """What is wrong with an export's dataset card (README.md), or None. The read-back needs
    none of it (the manifest and the Parquet files hold the samples), so this is a warning: the
    card is what the Hub and `datasets.load_dataset` read (the license, how the data was built,
    and in its YAML header the configs and the files each holds). Its prose may be edited; its
    configs must still name the files the manifest does, or `datasets` reads other rows."""
    path = folder / CARD
    redo = f"export it again (vidbench export) to have the card {path.name} written"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return (
            f"{path}: missing: the dataset card (license, how the data was built, the configs "
            f"`datasets` loads) is not there; the samples are read from {MANIFEST} as they are; "
            f"{redo}"
        )
    except (OSError, UnicodeDecodeError) as e:
        return f"{path}: not readable ({e}); {redo}"
    try:
        named = _card_configs(text)
    except ImportError:  # the export extra brings pyyaml: without it the header goes unchecked
        return None
    if named is None:
        return (
            f"{path}: no `configs` in its YAML header (edited?): `datasets` cannot read it; {redo}"
        )
    for exported in manifest.tasks.values():
        patterns = named.get(exported.config, [])
        if not all(any(fnmatch.fnmatch(f, p) for p in patterns) for f in exported.files):
            return (
                f"{path}: its configs no longer name the rows of {exported.config} "
                f"({', '.join(exported.files)}, as {MANIFEST} does): `datasets.load_dataset` "
                f"would read other rows than vidbench does; {redo}"
            )
    return None


def _card_configs(text: str) -> dict[str, list[str]] | None:
    """The configs a card's YAML header names, each with its data files' path patterns; None
    when the header has no `configs` (ImportError without pyyaml)."""
    import yaml

    header = _FRONT_MATTER.match(text)
    try:
        front = yaml.safe_load(header.group(1)) if header else None
    except yaml.YAMLError:
        front = None
    configs = front.get("configs") if isinstance(front, dict) else None
    if not isinstance(configs, list):
        return None
    return {
        str(c.get("config_name")): [
            str(f.get("path")) for f in c.get("data_files") or [] if isinstance(f, dict)
        ]
        for c in configs
        if isinstance(c, dict)
    }


_WARNED: set[str] = set()  # a command reads an export once per stage: one warning is enough


def _warn_once(warning: str | None) -> None:
    if warning is not None and warning not in _WARNED:
        _WARNED.add(warning)
        err.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False, soft_wrap=True)


def read_export(folder: Path, task: str) -> Loaded[Sample]:
    """The samples of `task` (a task base name, e.g. 4dbench-qa) in an export folder; a row
    that cannot be read (a missing video, broken metadata, an id met before) is a Problem naming
    it, and so is a row count other than the manifest's (rows removed or added since); a
    Parquet file without the columns an export writes is a DataError naming it."""
    require("reading an exported dataset", ["pyarrow"], "export")
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    manifest = read_manifest(folder)
    _warn_once(card_problem(folder, manifest))
    tasks = manifest.tasks
    if task not in tasks:
        raise DataError(
            f"{folder}: an export of {manifest.benchmark} holding "
            f"{', '.join(tasks) or 'no task'}; not {task}"
        )
    samples, problems = [], []
    first_row: dict[str, str] = {}  # id -> where it was first read
    read = 0
    for name in tasks[task].files:
        if leads_out(name):
            raise DataError(f"{folder / MANIFEST}: the rows file {name!r} is outside the folder")
        path = folder / name
        if not path.is_file():
            config = tasks[task].config
            raise DataError(f"{path}: missing (the rows of {config}, {folder / MANIFEST} says)")
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise DataError(f"{path}: not a readable Parquet file ({e})") from e
        wrong = _column_problem(table.schema)
        if wrong is not None:
            raise DataError(f"{path}: not the rows of a vidbench export: {wrong}")
        rows = table.to_pylist()
        read += len(rows)
        for number, row in enumerate(rows, start=1):
            record = str(row["id"]) if row["id"] is not None else f"row {number}"
            if record in first_row:
                message = f"row {number}: an id met before ({first_row[record]}); row skipped"
                problems.append(Problem(record, path, message))
                continue
            first_row[record] = f"{name} row {number}"
            try:
                samples.append(row_sample(row, folder))
            except DataError as e:
                problems.append(Problem(record, path, str(e)))
    if read != tasks[task].rows:
        message = (
            f"{tasks[task].config}: the export wrote {tasks[task].rows} rows, its Parquet files "
            f"hold {read} (rows removed or added since it was written)"
        )
        problems.append(Problem("", folder / MANIFEST, message))
    return Loaded(samples, problems)
