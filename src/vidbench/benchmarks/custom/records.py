"""The records of one rows file (.jsonl, .json, .csv, .parquet), read record by record: a record
that cannot be read is a Problem naming it, its file and, for text that is not UTF-8, the field;
every other record is kept.

Text is decoded with Python's `surrogateescape`, so a byte that is not UTF-8 stays in its field
as a marker instead of failing the whole file; each record is then checked field by field. A
CSV keeps its numbers as numbers where the whole column holds numbers written plainly ("12",
"0.5"; not "007" or "1e3", whose text a template would change), so that a CSV and a JSON file of
the same rows read alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.core.errors import DataError
from vidbench.extras import require
from vidbench.tasks.csv_records import read_csv_records
from vidbench.tasks.problems import Problem

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Record:
    where: str  # "line 3", "record 2", "key 'q1'", "row 4"
    value: Any
    key: str | None = None  # the key of a JSON object of records


def plain(value: Any) -> Any:
    """A value as JSON holds it: Parquet's dates and decimals become text, bytes text decoded
    as the rest (a NaN stays NaN: a window or a number that is not one is a problem, not a
    missing value)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def bad_text(value: Any, path: str = "") -> str | None:
    """Where a value holds text that is not UTF-8 (a byte kept by surrogateescape, or a JSON
    "\\ud800" escape): "the field 'question' (byte 0xff)"; None when all of it is text."""
    if isinstance(value, str):
        surrogate = _SURROGATE.search(value)
        if surrogate is None:
            return None
        code = ord(surrogate.group())
        what = (
            f"byte 0x{code - 0xDC00:02x}"
            if 0xDC80 <= code <= 0xDCFF
            else "an unpaired surrogate escape"
        )
        return f"the field {path!r} ({what})" if path else f"its text ({what})"
    if isinstance(value, dict):
        for key, item in value.items():
            if bad_text(str(key)):
                return f"a field name in {path!r}" if path else "a field name"
            found = bad_text(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    if isinstance(value, list):
        for n, item in enumerate(value):
            found = bad_text(item, f"{path}[{n}]")
            if found:
                return found
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig", "surrogateescape")
    except OSError as e:
        raise DataError(f"cannot read ({e.strerror or e})") from e


def _json_records(path: Path) -> tuple[list[Record], list[Problem]]:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    if isinstance(data, list):
        return [Record(f"record {i + 1}", v) for i, v in enumerate(data)], []
    if isinstance(data, dict):
        return [Record(f"key {k!r}", v, str(k)) for k, v in data.items()], []
    raise DataError("expected a JSON list of records or an object of records keyed by id")


def _jsonl_records(path: Path) -> tuple[list[Record], list[Problem]]:
    records, problems = [], []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(Record(f"line {number}", json.loads(line)))
        except json.JSONDecodeError as e:
            problems.append(Problem(f"line {number}", path, f"malformed JSON: {e.msg}"))
    return records, problems


_INT = re.compile(r"-?(0|[1-9]\d*)")
_FLOAT = re.compile(r"-?(0|[1-9]\d*)\.\d+")


def _number(text: str) -> int | float | None:
    """A CSV cell's number when the cell is written plainly (its text is the number's own)."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text) and repr(float(text)) == text:
        return float(text)
    return None


def _numeric_columns(rows: list[dict[str, str]]) -> set[str]:
    columns = {name for row in rows for name in row}
    return {
        name
        for name in columns
        if any(row.get(name) for row in rows)
        and all(not row.get(name) or _number(row[name]) is not None for row in rows)
    }


def _csv_records(path: Path) -> tuple[list[Record], list[Problem]]:
    found, problems = read_csv_records(_read_text(path), path, ())
    numeric = _numeric_columns([r.fields for r in found])
    records = []
    for r in found:
        fields: dict[str, Any] = dict(r.fields)
        for name in numeric:
            fields[name] = _number(fields[name]) if fields[name] else None
        records.append(Record(f"line {r.line}", fields))
    return records, problems


def _binary_type(kind: Any) -> Any:
    """An Arrow type with every string in it read as bytes (to decode value by value)."""
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pa.binary()
    if pa.types.is_list(kind):
        return pa.list_(_binary_type(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _binary_type(f.type)) for f in kind])
    return kind


def _parquet_records(path: Path) -> tuple[list[Record], list[Problem]]:
    require("reading .parquet rows", ["pyarrow"], "export")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"not a readable Parquet file ({e})") from e
    try:
        rows = table.to_pylist()
    except UnicodeDecodeError:  # some text is not UTF-8: read it as bytes, decode each value
        schema = pa.schema([pa.field(f.name, _binary_type(f.type)) for f in table.schema])
        rows = table.cast(schema).to_pylist()
    return [Record(f"row {i + 1}", plain(v)) for i, v in enumerate(rows)], []


_READERS = {
    ".json": _json_records,
    ".jsonl": _jsonl_records,
    ".csv": _csv_records,
    ".parquet": _parquet_records,
}


def read_records(path: Path) -> Iterator[Record | Problem]:
    """Every record of a rows file, or a Problem for each one that cannot be read (a record
    holding text that is not UTF-8 names its field); one Problem for a file that cannot be read
    at all."""
    try:
        records, problems = _READERS[path.suffix.lower()](path)
    except DataError as e:
        yield Problem("", path, str(e))
        return
    yield from problems
    for record in records:
        where = "its key" if bad_text(record.key) else bad_text(record.value)
        if where:
            yield Problem(record.where, path, f"not UTF-8 text in {where}; this row skipped")
        else:
            yield record
