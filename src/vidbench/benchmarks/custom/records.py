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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vidbench.core.errors import DataError
from vidbench.extras import require
from vidbench.tasks.csv_records import CsvRecord, iter_csv_records
from vidbench.tasks.problems import Problem

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Record:
    where: str  # "line 3", "record 2", "key 'q1'", "row 4"
    value: Any
    key: str | None = None  # the key of a JSON object of records
    utf8: bool = False  # known to hold only UTF-8 text (`bad_text` need not look)


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


def _open_text(path: Path, newline: str | None = None) -> TextIO:
    """The file as text, decoded as `_read_text` decodes it, to read line by line."""
    try:
        return path.open(encoding="utf-8-sig", errors="surrogateescape", newline=newline)
    except OSError as e:
        raise DataError(f"cannot read ({e.strerror or e})") from e


def _json_records(path: Path) -> Iterator[Record | Problem]:
    # A JSON document is parsed whole (json has no incremental reader): its records are held
    # while they are handed out, unlike the other formats' (read a record or a batch at a time).
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    if isinstance(data, list):
        return (Record(f"record {i + 1}", v) for i, v in enumerate(data))
    if isinstance(data, dict):
        return (Record(f"key {k!r}", v, str(k)) for k, v in data.items())
    raise DataError("expected a JSON list of records or an object of records keyed by id")


def _text_lines(path: Path) -> Iterator[str]:
    """The file's lines as `str.splitlines` of its whole text gives them (it also breaks at
    \x0b, \x0c, \x1c-\x1e, \x85, \u2028 and \u2029, which a file's own lines keep), read a
    line at a time."""
    with _open_text(path, newline="\n") as handle:
        for line in handle:
            yield from line.splitlines()


def _jsonl_records(path: Path) -> Iterator[Record | Problem]:
    for number, line in enumerate(_text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            yield Problem(f"line {number}", path, f"malformed JSON: {e.msg}")
            continue
        # Only a byte kept by surrogateescape or a "\\u" escape can make text that is not UTF-8.
        utf8 = "\\u" not in line and _SURROGATE.search(line) is None
        yield Record(f"line {number}", value, utf8=utf8)


_INT = re.compile(r"-?(0|[1-9]\d*)")
_FLOAT = re.compile(r"-?(0|[1-9]\d*)\.\d+")


def _number(text: str) -> int | float | None:
    """A CSV cell's number when the cell is written plainly (its text is the number's own)."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text) and repr(float(text)) == text:
        return float(text)
    return None


def _numeric_columns(rows: Iterable[dict[str, str]]) -> set[str]:
    """The columns that some row fills and that hold only plain numbers where filled."""
    filled: set[str] = set()
    not_numbers: set[str] = set()
    for row in rows:
        for name, text in row.items():
            if text:
                filled.add(name)
                if name not in not_numbers and _number(text) is None:
                    not_numbers.add(name)
    return filled - not_numbers


def _csv_lines(path: Path) -> Iterator[CsvRecord | Problem]:
    with _open_text(path, newline="") as handle:
        yield from iter_csv_records(handle, path, ())


def _csv_records(path: Path) -> Iterator[Record | Problem]:
    # Read twice, holding neither: once to find the numeric columns (which need every row),
    # then to hand the records out. A file the csv module cannot parse fails the first time,
    # before any record is handed out.
    numeric = _numeric_columns(r.fields for r in _csv_lines(path) if isinstance(r, CsvRecord))
    return _csv_converted(path, numeric)


def _csv_converted(path: Path, numeric: set[str]) -> Iterator[Record | Problem]:
    for r in _csv_lines(path):
        if isinstance(r, Problem):
            yield r
            continue
        fields: dict[str, Any] = dict(r.fields)
        for name in numeric:
            fields[name] = _number(fields[name]) if fields[name] else None
        yield Record(f"line {r.line}", fields)


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


_PARQUET_BATCH = 4096  # rows read at a time


def _parquet_records(path: Path) -> Iterator[Record | Problem]:
    require("reading .parquet rows", ["pyarrow"], "export")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        batches = parquet.iter_batches(batch_size=_PARQUET_BATCH)
        first = next(batches, None)  # a file that cannot be read at all fails here
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"not a readable Parquet file ({e})") from e
    return _parquet_rows(path, first, batches)


def _parquet_rows(path: Path, first: Any, batches: Iterator[Any]) -> Iterator[Record | Problem]:
    import pyarrow as pa

    number = 0
    batch = first
    while batch is not None:
        try:
            rows = batch.to_pylist()
        except UnicodeDecodeError:  # some text is not UTF-8: read it as bytes, decode each value
            schema = pa.schema([pa.field(f.name, _binary_type(f.type)) for f in batch.schema])
            rows = batch.cast(schema).to_pylist()
        for value in rows:
            number += 1
            yield Record(f"row {number}", plain(value))
        try:
            batch = next(batches, None)
        except (OSError, pa.ArrowException) as e:  # a damaged page past the first batch
            yield Problem("", path, f"not a readable Parquet file past row {number} ({e})")
            return


_READERS: dict[str, Callable[[Path], Iterator[Record | Problem]]] = {
    ".json": _json_records,
    ".jsonl": _jsonl_records,
    ".csv": _csv_records,
    ".parquet": _parquet_records,
}


def read_records(path: Path) -> Iterator[Record | Problem]:
    """Every record of a rows file in file order, read a record (a Parquet batch) at a time, or
    a Problem for each one that cannot be read (a record holding text that is not UTF-8 names
    its field); one Problem for a file that cannot be read at all."""
    try:
        found = _READERS[path.suffix.lower()](path)
        for record in found:
            if isinstance(record, Problem):
                yield record
                continue
            if record.utf8:
                yield record
                continue
            where = "its key" if bad_text(record.key) else bad_text(record.value)
            if where:
                yield Problem(record.where, path, f"not UTF-8 text in {where}; this row skipped")
            else:
                yield record
    except DataError as e:
        yield Problem("", path, str(e))
