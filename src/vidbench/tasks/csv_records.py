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
from collections.abc import Iterator, Sequence
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


def _records(text: str) -> Iterator[tuple[int, int, list[str]]]:
    """(first line, last line, fields) of every record, in file order."""
    reader = csv.reader(io.StringIO(text, newline=""))
    first = 1
    for row in reader:
        yield first, reader.line_num, row
        first = reader.line_num + 1


def read_csv_records(
    text: str, path: Path, required: Sequence[str], record_name: str = "row"
) -> tuple[list[CsvRecord], list[Problem]]:
    """The well-formed records of a CSV text (a header row first) and a Problem per malformed
    one; DataError when the header lacks a `required` column."""
    lines = text.splitlines()
    try:
        records = list(_records(text))
    except csv.Error as e:
        raise DataError(f"{path}: malformed CSV ({e})") from e
    if not records:
        raise DataError(f"{path}: empty file (expected a header row)")
    _, _, header = records[0]
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"{path}: missing columns {missing} (expected {', '.join(required)})")
    width = len(header)
    good: list[CsvRecord] = []
    problems: list[Problem] = []

    def keep(line: int, fields: list[str]) -> None:
        if len(fields) != width:
            problems.append(
                Problem(
                    f"line {line}",
                    path,
                    f"{len(fields)} fields, the header has {width}; {record_name} skipped",
                )
            )
            return
        good.append(CsvRecord(line, dict(zip(header, fields, strict=True))))

    for first, last, fields in records[1:]:
        if not fields:
            continue  # a blank line
        swallowed = [
            n for n in range(first + 1, last + 1) if len(_parse(lines[n - 1]) or ()) == width
        ]
        if not swallowed:
            keep(first, fields)
            continue
        problems.append(
            Problem(
                f"line {first}",
                path,
                f"a quoted field is not closed and runs over lines "
                f"{first + 1}..{last}, which are {record_name}s of their own; this {record_name} "
                "skipped, the lines after it read one by one",
            )
        )
        for n in range(first + 1, last + 1):
            row = _parse(lines[n - 1])
            if row:
                keep(n, row)
    return good, problems
