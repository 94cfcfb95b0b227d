"""Reading and writing vidbench's files: the one place that decides how a file is replaced
atomically and how JSON and JSON Lines are encoded and read, and how an output folder is made.

Writers put the whole file under a temporary name in the same folder and rename it over the
target, so a reader (or a command killed half-way) never sees half a file. Readers of JSON Lines
name the file and line of every bad line (not JSON, not UTF-8) and keep reading: one bad line
never hides the rest. Hand-written rather than the `jsonlines` library because callers need the
line numbers of the bad lines as well as the good records, and no library returns both. An
output folder is made when needed (`make_folder`), with a clear error when a path cannot be one.

Two JSON types: what is read is pydantic's `JsonValue` (dicts and lists a reader narrows with
isinstance); what is built to be written is `Json`, whose containers are read-only, so that a
`dict[str, str]` or a `list[int]` is one (a `dict[str, JsonValue]` would not take them: dict is
invariant). The writers take any value json.dumps takes: TypedDicts and dataclass dicts too.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from pydantic import JsonValue

from vidbench.core.errors import ConfigError, DataError, DiskFullError, is_disk_full

Json: TypeAlias = Mapping[str, "Json"] | Sequence["Json"] | str | int | float | bool | None


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole: a temporary file in the same folder, then a rename."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError as e:
        if is_disk_full(e):
            raise DiskFullError(path.parent) from e
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; caches and outputs are shared
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and is_disk_full(e):
            raise DiskFullError(path.parent) from e
        raise


def write_text(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


def json_text(data: object, indent: int | None = 2) -> str:
    """`data` as JSON text (UTF-8 kept as is, a final newline when indented)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if indent is not None else text


def write_json(path: Path, data: object, indent: int | None = 2) -> None:
    write_text(path, json_text(data, indent))


def jsonl_text(records: Iterable[object]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def write_jsonl(path: Path, records: Iterable[object]) -> None:
    write_text(path, jsonl_text(records))


def json_object(value: JsonValue, where: str) -> dict[str, JsonValue]:
    """`value` when it is a JSON object; DataError saying `where` it is not."""
    if not isinstance(value, dict):
        raise DataError(f"{where}: not a JSON object")
    return value


def as_int(value: object) -> int | None:
    """`value` when it is a whole number (a bool is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_json(path: Path) -> JsonValue:
    """The JSON value in `path`; DataError naming the file when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise DataError(f"{path}: no such file") from e
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not readable JSON ({e})") from e


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSON Lines file: its value, or why it could not be read."""

    number: int  # 1-based
    value: JsonValue = None
    error: str | None = None  # "not UTF-8 text (...)" or "malformed JSON: ..."

    def where(self, path: Path) -> str:
        return f"{path} line {self.number}"


def json_lines(path: Path) -> Iterator[JsonLine]:
    """Every non-blank line of `path`, decoded line by line: a line that is not UTF-8 or not JSON
    comes back with its error and the reading goes on. DataError when the file cannot be
    opened."""
    try:
        handle = path.open("rb")
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from e
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield JsonLine(number, error=f"not UTF-8 text (byte {e.start + 1})")
                continue
            try:
                value = json.loads(text)
                json.dumps(value, ensure_ascii=False).encode("utf-8")
            except json.JSONDecodeError as e:
                yield JsonLine(number, error=f"malformed JSON: {e.msg}")
            except UnicodeEncodeError:  # "\ud800": valid JSON, but no text to store or show
                yield JsonLine(number, error="an unpaired surrogate escape (\\ud8xx): no text")
            else:
                yield JsonLine(number, value)


def read_jsonl(path: Path) -> list[JsonValue]:
    """Every record of a JSON Lines file vidbench wrote itself; DataError naming the file and
    line at the first bad line (files users bring are read with `json_lines`)."""
    records = []
    for line in json_lines(path):
        if line.error is not None:
            raise DataError(f"{line.where(path)}: {line.error}")
        records.append(line.value)
    return records


def make_folder(path: Path, what: str = "--out") -> Path:
    """``path`` as a folder that exists (made, with its parents, when needed); ConfigError
    naming it and `what` gave it when it cannot be one (a file is there or on the way to it, no
    permission, a read-only disk)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        reason = e.strerror or str(e)
        if isinstance(e, (FileExistsError, NotADirectoryError)):
            reason = "a file is in the way"
        raise ConfigError(f"{what} {path}: cannot be made a folder ({reason})") from None
    return path
