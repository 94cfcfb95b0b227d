"""CSV files of user data read record by record, naming the lines of every malformed record.

The csv module does the parsing. What it cannot say is that a record is wrong: an unterminated
quote makes it read the following lines, whole records of the file, as the rest of one field, and
a row with a stray comma has one field too many; both parse without an error. Here every record
must have the header's number of fields, and a quoted field may not hold a line that is itself a
complete record of the file (the sign of a quote left open). Such a record is a problem naming
its first line; the lines it swallowed are read again one by one, so the well-formed records
among them are kept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from vidbench.core.errors import DataError
from vidbench.tasks.problems import Problem


@dataclass(frozen=True)
class CsvRecord:
    line: int  # the physical line the record starts on (1 = the header)
    fields: dict[str, str]


def _parse(line: str) -> list[str] | None:
    try:
        rows = list(csv.reader([line]))
    except csv.Error:
        return None
    return rows[0] if len(rows) == 1 else None


def _records(lines: Iterable[str]) -> Iterator[tuple[int, int, list[str], list[str]]]:
    """(first line, last line, fields, the record's lines without their line ends) of every
    record, in file order: the lines are kept only while their record is read."""
    held: list[str] = []

    def holding() -> Iterator[str]:
        for line in lines:
            held.append(line.rstrip("\r\n"))  # newline="" gives one line end a line
            yield line

    reader = csv.reader(holding())
    first = 1
    for row in reader:
        yield first, reader.line_num, row, held[:]
        held.clear()
        first = reader.line_num + 1


def read_csv_records(
    text: str, path: Path, required: Sequence[str], record_name: str = "row"
) -> tuple[list[CsvRecord], list[Problem]]:
    """The well-formed records of a CSV text (a header row first) and a Problem per malformed
    one; DataError when the header lacks a `required` column or the text is not CSV."""
    good: list[CsvRecord] = []
    problems: list[Problem] = []
    for found in iter_csv_records(io.StringIO(text, newline=""), path, required, record_name):
        if isinstance(found, Problem):
            problems.append(found)
        else:
            good.append(found)
    return good, problems


def iter_csv_records(
    lines: Iterable[str], path: Path, required: Sequence[str], record_name: str = "row"
) -> Iterator[CsvRecord | Problem]:
    """`read_csv_records` a record at a time, records and problems in file order, from the
    lines of a file opened with newline="" (so that a quoted field keeps its line ends).
    DataError when the header lacks a `required` column, or (once the records before it are
    handed out) where the text stops being CSV."""
    records = _records(lines)
    try:
        header_record = next(records, None)
    except csv.Error as e:
        raise DataError(f"{path}: malformed CSV ({e})") from e
    if header_record is None:
        raise DataError(f"{path}: empty file (expected a header row)")
    header = header_record[2]
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"{path}: missing columns {missing} (expected {', '.join(required)})")
    width = len(header)

    def kept(line: int, fields: list[str]) -> CsvRecord | Problem:
        if len(fields) != width:
            return Problem(
                f"line {line}",
                path,
                f"{len(fields)} fields, the header has {width}; {record_name} skipped",
            )
        return CsvRecord(line, dict(zip(header, fields, strict=True)))

    try:
        for first, last, fields, record_lines in records:
            if not fields:
                continue  # a blank line
            inner = record_lines[1:]  # the lines first + 1 .. last
            if not any(len(_parse(line) or ()) == width for line in inner):
                yield kept(first, fields)
                continue
            yield Problem(
                f"line {first}",
                path,
                f"a quoted field is not closed and runs over lines "
                f"{first + 1}..{last}, which are {record_name}s of their own; this {record_name} "
                "skipped, the lines after it read one by one",
            )
            for n, line in enumerate(inner, start=first + 1):
                row = _parse(line)
                if row:
                    yield kept(n, row)
    except csv.Error as e:
        raise DataError(f"{path}: malformed CSV ({e})") from e
