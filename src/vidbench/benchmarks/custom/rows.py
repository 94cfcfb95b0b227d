"""The rows of a declared benchmark: every record of its rows files (.jsonl, .json, .csv,
.parquet) as a plain dict, with its id and where it is, and a Problem for each bad one.

A row's fields are the record's, plus the `set` fields of its [[rows]] entry and `_file` (its
file's name without the suffix). Its id is the `id` field the spec names; else the key of a JSON
object of records; else the record's own `id` when every record of the file has one; else
`<file>-<n>` (n counting records from 1).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom.spec import FILE_FIELD, RowSource, Spec
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines
from vidbench.extras import require
from vidbench.tasks.csv_records import read_csv_records
from vidbench.tasks.problems import Loaded, Problem


@dataclass(frozen=True)
class DeclaredRow:
    id: str
    fields: dict[str, Any]
    where: str  # "line 3", "record 2", "key 'q1'"
    file: Path
    source: RowSource


@dataclass(frozen=True)
class _Record:
    where: str
    value: Any
    key: str | None = None  # the key of a JSON object of records


def plain(value: Any) -> Any:
    """A value as JSON holds it: Parquet's dates, decimals and bytes become text, NaN None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _json_records(path: Path) -> tuple[list[_Record], list[Problem]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read ({e})") from e
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    if isinstance(data, list):
        return [_Record(f"record {i + 1}", v) for i, v in enumerate(data)], []
    if isinstance(data, dict):
        return [_Record(f"key {k!r}", v, str(k)) for k, v in data.items()], []
    raise DataError("expected a JSON list of records or an object of records keyed by id")


def _jsonl_records(path: Path) -> tuple[list[_Record], list[Problem]]:
    records, problems = [], []
    for line in json_lines(path):
        if line.error is None:
            records.append(_Record(f"line {line.number}", line.value))
        else:
            problems.append(Problem(f"line {line.number}", path, line.error))
    return records, problems


def _csv_records(path: Path) -> tuple[list[_Record], list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read ({e})") from e
    found, problems = read_csv_records(text, path, ())
    return [_Record(f"line {r.line}", r.fields) for r in found], problems


def _parquet_records(path: Path) -> tuple[list[_Record], list[Problem]]:
    require("reading .parquet rows", ["pyarrow"], "export")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"not a readable Parquet file ({e})") from e
    return [_Record(f"row {i + 1}", v) for i, v in enumerate(rows)], []


_READERS = {
    ".json": _json_records,
    ".jsonl": _jsonl_records,
    ".csv": _csv_records,
    ".parquet": _parquet_records,
}


def source_files(source: RowSource, data: Path) -> list[Path]:
    """The files a [[rows]] entry names under the data folder (its glob's matches, sorted)."""
    path = Path(source.path)
    if not any(c in source.path for c in "*?["):
        return [path if path.is_absolute() else data / path]
    if path.is_absolute():
        return sorted(Path(path.anchor).glob(str(path.relative_to(path.anchor))))
    return sorted(data.glob(source.path))


def _rows_of(file: Path, source: RowSource, spec: Spec) -> Iterator[DeclaredRow | Problem]:
    try:
        records, problems = _READERS[file.suffix.lower()](file)
    except DataError as e:
        yield Problem("", file, str(e))
        return
    yield from problems
    objects = [r for r in records if isinstance(r.value, dict)]
    own_ids = spec.id is None and all("id" in r.value for r in objects)
    for n, record in enumerate(records, start=1):
        if not isinstance(record.value, dict):
            yield Problem(
                record.where, file, f"not a record (an object of fields): {record.value!r}"
            )
            continue
        fields = {**plain(record.value), **source.set, FILE_FIELD: file.stem}
        if spec.id is not None:
            row_id = fields.get(spec.id)
        elif record.key is not None:
            row_id = record.key
        else:
            row_id = fields["id"] if own_ids else f"{file.stem}-{n}"
        if row_id is None or str(row_id).strip() == "":
            yield Problem(record.where, file, f"no id: the field {spec.id!r} is missing or empty")
            continue
        yield DeclaredRow(str(row_id), fields, record.where, file, source)


def read_rows(spec: Spec, data: Path) -> Loaded[DeclaredRow]:
    """Every row of every rows file, and a Problem for each file or record that cannot be read
    (a missing file, malformed JSON, a line of the wrong width, a repeated id)."""
    rows: list[DeclaredRow] = []
    problems: list[Problem] = []
    first: dict[str, DeclaredRow] = {}
    for source in spec.sources:
        files = source_files(source, data)
        if not files or not files[0].is_file():
            where = files[0] if files else data / source.path
            problems.append(Problem("", where, f"no rows file here (rows = {source.path!r})"))
            continue
        for file in files:
            for found in _rows_of(file, source, spec):
                if isinstance(found, Problem):
                    problems.append(found)
                elif found.id in first:
                    earlier = first[found.id]
                    problems.append(
                        Problem(
                            found.id,
                            file,
                            f"{found.where}: duplicate id (first at {earlier.file.name} "
                            f"{earlier.where}); this row skipped",
                        )
                    )
                else:
                    first[found.id] = found
                    rows.append(found)
    return Loaded(rows, problems)
