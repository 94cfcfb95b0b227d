"""Reading and writing vidbench's files: the one place that decides how a file is replaced
atomically and how JSON and JSON Lines are encoded and read, and how an output folder is made.

Writers put the whole file under a temporary name in the same folder and rename it over the
target, so a reader (or a command killed half-way) never sees half a file. Readers of JSON Lines
name the file and line of every bad line (not JSON, not UTF-8) and keep reading: one bad line
never hides the rest. Hand-written rather than the `jsonlines` library because callers need the
line numbers of the bad lines as well as the good records, and no library returns both.

`iter_json_members` reads a JSON file that holds one object or list of records (4D-Bench's
4d_qa.json, MMWorld's annotations) the same way, record by record and a chunk of the file at a
time (`json_members`: all of them in a list): Python's `json` module decodes each member
(`raw_decode`), and between members this module finds where a broken one ends, so a missing comma
or a byte that is not UTF-8 costs the record it is in, not the file. No JSON library reads on past
an error (they stop at the first one), hence the hand-written walk.

Two JSON types: what is read is pydantic's `JsonValue` (dicts and lists a reader narrows with
isinstance); what is built to be written is `Json`, whose containers are read-only, so that a
`dict[str, str]` or a `list[int]` is one (a `dict[str, JsonValue]` would not take them: dict is
invariant). The writers take any value json.dumps takes: TypedDicts and dataclass dicts too.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeAlias

from pydantic import JsonValue

from vidbench.core.errors import ConfigError, DataError, DiskFullError, is_disk_full

Json: TypeAlias = Mapping[str, "Json"] | Sequence["Json"] | str | int | float | bool | None
"""A JSON value as vidbench keeps it (Sample.metadata, Model.identity, Task.settings); read
only, so a task's own dicts and tuples are ones."""


TEMPORARY_PREFIX = ".tmp-"
# the names tempfile.mkstemp gives with that prefix: 8 of "a-z0-9_" (and no suffix)
_TEMPORARY_NAME = re.compile(re.escape(TEMPORARY_PREFIX) + r"[a-z0-9_]{8}")


def write_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `data` (or its chunks, in order) to `path` whole: a temporary file in the same
    folder, then a rename. Chunks are written as they come, so a large file need not be held
    in memory; an error while making them leaves `path` as it was. A process killed with
    kill -9 half-way leaves the temporary file: `remove_temporaries` clears it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMPORARY_PREFIX)
    except OSError as e:
        if is_disk_full(e):
            raise DiskFullError(path.parent) from e
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in [data] if isinstance(data, bytes) else data:
                f.write(chunk)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; caches and outputs are shared
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and is_disk_full(e):
            raise DiskFullError(path.parent) from e
        raise


def remove_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files `write_atomic` left in `folder` (not its subfolders): files
    named as it names them, from a writer killed half-way. Call it only while this process
    holds `folder` alone (runner/lock.py), or a live writer's file goes. The files removed."""
    removed = []
    with contextlib.suppress(OSError):  # no folder, or not readable: nothing of ours to clear
        for entry in os.scandir(folder):
            if _TEMPORARY_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):  # gone meanwhile, or not ours to remove
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


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
    """One line per record, each written as it comes (`records` may be a generator)."""
    write_atomic(path, (jsonl_text([record]).encode("utf-8") for record in records))


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
    offset: int = 0  # where the line starts in the file, in bytes (to read it again alone)

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
        end = 0
        for number, raw in enumerate(handle, start=1):
            start, end = end, end + len(raw)
            if number == 1 and raw.startswith(codecs.BOM_UTF8):  # a file saved by Notepad, Excel
                raw, start = raw[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield JsonLine(number, error=f"not UTF-8 text (byte {e.start + 1})", offset=start)
                continue
            try:
                value = json.loads(text)
                if "\\u" in text:  # only an escape can make a lone surrogate in UTF-8 text
                    json.dumps(value, ensure_ascii=False).encode("utf-8")
            except json.JSONDecodeError as e:
                yield JsonLine(number, error=f"malformed JSON: {e.msg}", offset=start)
            except UnicodeEncodeError:  # "\ud800": valid JSON, but no text to store or show
                yield JsonLine(number, error="an unpaired surrogate escape (\\ud8xx): no text",
                               offset=start)  # fmt: skip
            else:
                yield JsonLine(number, value, offset=start)


@dataclass(frozen=True)
class JsonMember:
    """One member of the object or list a JSON file holds: its value, or why it could not be
    read. `note` says what was wrong around a member that was read all the same (a missing
    comma before it)."""

    index: int  # 1-based, in file order
    line: int  # the line it starts on
    key: str | None  # its key in an object (when it could be read); None in a list
    value: JsonValue = None
    error: str | None = None
    note: str | None = None

    def name(self) -> str:
        return self.key if self.key is not None else f"record {self.index}"


@dataclass(frozen=True)
class JsonMembers:
    kind: type  # dict or list: what the file holds
    members: list[JsonMember]
    problems: list[str]  # what is wrong with the file around its members (its end)


@dataclass(frozen=True)
class JsonMemberStream:
    """The members of a JSON file as they are read (`iter_json_members`): `problems` is filled
    once `members` is exhausted (the file's end is where they are found)."""

    kind: type  # dict or list: what the file holds
    members: Iterator[JsonMember]
    problems: list[str]


JSON_CHUNK = 1 << 16  # bytes read at a time by iter_json_members
# How far past a position JSON's decoder may look before it decides (a number's exponent, a
# literal such as -Infinity, a \uXXXX escape): a decision made closer than this to the end of
# what has been read may change with more text, so more is read first.
_LOOKAHEAD = 16
_SPACE = re.compile(r"[ \t\n\r]*")
_UNDECODED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8 (surrogateescape)
# a JSON escape of half of a character (or of a whole one, as a pair); a member that holds neither
# this nor a byte that is not UTF-8 is text (no need to encode it to know)
_SURROGATE_ESCAPE = re.compile("\\\\u[dD][89a-fA-F]")
_DECODER = json.JSONDecoder()


def json_members(path: Path) -> JsonMembers:
    """The members of the object or list a JSON file holds, in file order, each decoded on its
    own (`iter_json_members`, all at once)."""
    stream = iter_json_members(path)
    members = list(stream.members)
    return JsonMembers(stream.kind, members, stream.problems)


def iter_json_members(path: Path, chunk_size: int = JSON_CHUNK) -> JsonMemberStream:
    """The members of the object or list a JSON file holds, in file order, each decoded on its
    own as the file is read `chunk_size` bytes at a time: what is held is the member being read
    and the chunk after it (a broken member: until where it ends is known). A member that is not
    JSON (a missing comma or quote inside it, a bad literal, a bracket left open where the next
    member begins), holds bytes that are not UTF-8 or an unpaired surrogate escape comes back
    with its error, and the reading goes on after it; a missing comma between two members is
    noted on the second, which is read. DataError when the file cannot be read or holds neither
    an object nor a list (raised here, before any member).

    No JSON library reads on past an error, nor says where it stopped reading (to know whether
    a decision could change with more text), hence the hand-written walk around `raw_decode`."""
    with _open(path) as handle:
        kind, _ = _opening(path, _Window(handle, chunk_size))
    problems: list[str] = []
    return JsonMemberStream(kind, _read_members(path, chunk_size, problems), problems)


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from e


class _Window:
    """The part of a JSON file's text still needed: from the mark (where the member being read,
    or the space before the next, begins) to the end of what has been read. Positions are
    indices into `text`; `more` reads on and drops what is before the mark, shifting them. The
    line numbers and columns it gives are the file's."""

    def __init__(self, handle: BinaryIO, chunk_size: int) -> None:
        self.text = ""
        self.eof = False
        self._handle = handle
        self._chunk_size = chunk_size
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._started = False  # the first character was read (and a BOM before it dropped)
        # whether a byte that is not UTF-8 may have been read: only then are members searched
        # for one (a search per member costs as much as decoding it)
        self.maybe_undecoded = False
        self._mark = 0
        self._first_line = 1  # the line text[0] is on
        self._newline_before = -1  # where the last newline before text[0] is (-1: none)
        self._line, self._counted = 1, 0  # the line text[_counted] is on: counted on from there

    def mark(self, pos: int) -> None:
        """Nothing before `pos` is needed any more."""
        self._mark = pos

    def more(self) -> int:
        """Read on: a chunk, or as much as is held past the mark when that is more (a long
        member is decoded again at each step: doubling keeps that linear). Drops what is before
        the mark first and returns how many characters it dropped (positions shift back by
        that); sets `eof` at the end of the file."""
        shift = self._drop()
        try:
            raw = self._handle.read(max(self._chunk_size, len(self.text) - self._mark))
        except OSError as e:
            raise DataError(f"{self._handle.name}: cannot read ({e.strerror or e})") from e
        piece = self._decoder.decode(raw, final=not raw)
        self.maybe_undecoded = self.maybe_undecoded or not raw.isascii()
        if piece and not self._started:
            piece, self._started = piece.removeprefix("\ufeff"), True
        self.text += piece
        self.eof = not raw
        return shift

    def _drop(self) -> int:
        keep = self._mark
        newline = self.text.rfind("\n", 0, keep)
        if newline >= 0 and not self.text[newline + 1 : keep].strip():
            keep = newline  # the indentation before a member tells its siblings (_sibling)
        # else the window starts on the file's first line or after something on its line:
        # no member there has a sibling pattern, here as in the whole text
        if keep == 0:
            return 0
        last = self.text.rfind("\n", 0, keep)
        self._newline_before = (last if last >= 0 else self._newline_before) - keep
        self._first_line += self.text.count("\n", 0, keep)
        if self._counted >= keep:
            self._counted -= keep
        else:
            self._line, self._counted = self._first_line, 0
        self._mark -= keep
        self.text = self.text[keep:]
        return keep

    def skip(self, pos: int) -> int:
        """The first position at or after `pos` that is not JSON whitespace, reading on as
        needed (the end of `text` only at the end of the file). Nothing before `pos` is needed
        any more."""
        while True:
            pos = _skip(self.text, pos)
            self._mark = pos
            if pos < len(self.text) or self.eof:
                return pos
            pos -= self.more()

    def settled(self, pos: int) -> bool:
        """Whether what was decided reading up to `pos` stays so however the file goes on."""
        return self.eof or pos + _LOOKAHEAD <= len(self.text)

    def line(self, pos: int) -> int:
        if pos < self._counted:
            self._line, self._counted = self._first_line, 0
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def where(self, pos: int) -> str:
        newline = self.text.rfind("\n", 0, pos)
        column = pos - (newline if newline >= 0 else self._newline_before)
        return f"line {self.line(pos)}, column {column}"


def _opening(path: Path, window: _Window) -> tuple[type, int]:
    """What the file holds (dict or list) and the position after its opening bracket."""
    pos = window.skip(0)
    if window.text[pos : pos + 1] not in ("{", "["):
        raise DataError(f"{path}: expected a JSON object or list of records")
    return (dict if window.text[pos] == "{" else list), pos + 1


def _read_members(path: Path, chunk_size: int, problems: list[str]) -> Iterator[JsonMember]:
    """iter_json_members' members; the file's problems appended to `problems` at its end."""
    with _open(path) as handle:
        window = _Window(handle, chunk_size)
        kind, pos = _opening(path, window)
        closing = "}" if kind is dict else "]"
        pos, note, index = window.skip(pos), None, 0
        while pos < len(window.text) and window.text[pos] != closing:
            index += 1
            line = window.line(pos)
            window.mark(pos)
            while (read := _member(window, pos, kind)) is None:
                pos -= window.more()
            key, value, error, end = read
            yield JsonMember(index, line, key, value, error, note)
            pos, note = window.skip(end), None
            if window.text[pos : pos + 1] == ",":
                pos = window.skip(pos + 1)
            elif not error and pos < len(window.text) and window.text[pos] != closing:
                where = window.where(pos)
                note = f"a ',' is missing before this record ({where}); read as if there"
        if pos == len(window.text):
            problems.append(f"the file ends before the '{closing}' that closes its records")
            return
        where = window.where(pos + 1)
        if window.skip(pos + 1) < len(window.text):
            problems.append(f"text after the records' closing '{closing}' ({where})")


# (key, value or None, error or None, where it ends) of one member
_Read: TypeAlias = tuple[str | None, JsonValue, str | None, int]


def _member(window: _Window, start: int, kind: type) -> _Read | None:
    """The member at `start`; None when more text must be read to know it (a decision was made
    too close to the end of what has been read)."""
    text = window.text
    key, pos = None, start
    try:
        if kind is dict:
            if text[pos] != '"':
                raise json.JSONDecodeError("expected a quoted key", text, pos)
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] != ":":
                raise json.JSONDecodeError("expected ':' after the key", text, pos)
            pos = _skip(text, pos + 1)
        value, pos = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as e:
        # the decoder fails where it stops reading, or a few characters before, except in a
        # string still open at the end of what was read (it may close further on)
        unterminated = e.msg.startswith("Unterminated string") and not window.eof
        if unterminated or not window.settled(e.pos):
            return None
        sibling = _sibling(text, start)
        end = _member_end(text, start, sibling)
        if not window.settled(end + len(sibling or "")):
            return None
        error = f"malformed JSON at {window.where(e.pos)}: {e.msg}"
        if end == len(text):
            error += "; the file ends inside this record"
        return key, None, error, end
    if not window.settled(pos):
        return None
    swallowed = _swallowed(text, start, pos, value)
    if swallowed is not None:  # a bracket left open: the next members were read into this one
        error = f"a bracket is not closed before the next record begins ({window.where(swallowed)})"
        return key, None, error, swallowed
    not_text = _not_text(window, start, pos, key, value)
    return key, None if not_text else value, not_text, pos


def _sibling(text: str, start: int) -> str | None:
    """In an indented file that starts each member on a line of its own, what the start of the
    next member looks like: a new line, this one's indentation and first character; None in a
    file written otherwise."""
    line_start = text.rfind("\n", 0, start) + 1
    indent = text[line_start:start]
    if line_start == 0 or not indent or indent.strip():
        return None
    return "\n" + indent + text[start]


def _swallowed(text: str, start: int, end: int, value: JsonValue) -> int | None:
    """Where the next member begins inside the member read from `start` to `end`, when that
    member's value took it in as one of its own keys (a '{' left open before it); else None."""
    sibling = _sibling(text, start)
    if sibling is None or text[start] != '"' or not isinstance(value, dict):
        return None
    found = text.find(sibling, start, end)
    while found >= 0:
        try:
            key, _ = _DECODER.raw_decode(text, found + len(sibling) - 1)
        except json.JSONDecodeError:
            key = None
        if key in value:
            return found + 1
        found = text.find(sibling, found + 1, end)
    return None


def _member_end(text: str, start: int, sibling: str | None) -> int:
    """Where the broken member at `start` ends: the ',' or closing bracket after it at its own
    depth (strings skipped, a string ending at its line's end as JSON's must), or, in a file
    written one member a line, the next line that starts a member as this one did (a bracket
    left open must not swallow the records after it); the end of the text when none."""
    depth, pos = 0, start
    while pos < len(text):
        char = text[pos]
        if char == '"':
            pos += 1
            while pos < len(text) and text[pos] not in '"\n':
                pos += 2 if text[pos] == "\\" else 1
        elif char in "{[":
            depth += 1
        elif char in "}]":
            if depth == 0 and pos > start:  # at `start`: a stray bracket, this member's text
                return pos
            depth = max(depth - 1, 0)
        elif (char == "," and depth == 0) or (
            char == "\n" and depth > 0 and sibling and text.startswith(sibling, pos)
        ):
            return pos
        pos += 1
    return len(text)


def _not_text(
    window: _Window, start: int, end: int, key: str | None, value: JsonValue
) -> str | None:
    """Why a decoded member cannot be kept as text (bytes that are not UTF-8, an unpaired
    surrogate escape such as "\\ud800"), or None."""
    text = window.text
    undecoded = window.maybe_undecoded and _UNDECODED.search(text, start, end)
    if not undecoded and not _SURROGATE_ESCAPE.search(text, start, end):
        return None
    try:
        json.dumps([key, value], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        bad = _UNDECODED.search(text, start, end)
        if bad is None:
            return "an unpaired surrogate escape (\\ud8xx): no text"
        return f"not UTF-8 text ({not_text(bad.group())} at {window.where(bad.start())})"
    return None


def not_text(text: str) -> str | None:
    """What in `text` (decoded with surrogateescape) is not text: "byte 0xff" for the first
    byte that was not UTF-8, "an unpaired surrogate escape" for half of a character that came
    as a JSON escape; None when it is all text."""
    for char in text:
        if "\udc80" <= char <= "\udcff":
            return f"byte 0x{ord(char) - 0xDC00:02x}"
        if "\ud800" <= char <= "\udfff":
            return "an unpaired surrogate escape"
    return None


def _skip(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]


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


def not_a_file(path: Path) -> str:
    """Why `path` (which is not a readable file) is not one, in words: "not found", "a folder",
    "a link to nothing (broken)" or "a link loop"."""
    if path.is_symlink():
        try:
            path.resolve(strict=True)
        except FileNotFoundError:
            return "a link to nothing (broken)"
        except (RuntimeError, OSError):  # Python 3.11 says RuntimeError, later ones ELOOP
            return "a link loop"
    if path.is_dir():
        return "a folder"
    return "not found"


def missing_file(path: Path, what: str) -> str:
    """ "WHAT not found", or why `path` is not one ("WHAT is a link loop")."""
    why = not_a_file(path)
    return f"{what} not found" if why == "not found" else f"{what} is {why}"
