"""Field paths: how benchmark.toml names a value inside a row, wherever a field is named.

    name          the row's field `name` (a field whose own name holds dots or brackets is
                  found as it is first)
    meta.video    the field `video` of the object in `meta`
    options[0]    the first element of the list in `options`
    choices[].text
                  the `text` of every element of the list in `choices` (a list)

and templates over them, `"{video}_{qid}"`, `"videos/{meta.video_id}.mp4"`: Python's format
syntax, each `{...}` a path. `_key` (the key of a JSON object of records), `_file`, `_index` and
`_parent` are fields like the others (rows.py sets them).

Written here rather than taken from a JSONPath library: the paths are the few forms above, and
the errors must name the part of the path that is missing in the row at hand.
"""

from __future__ import annotations

import glob
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from vidbench.core.errors import DataError

_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d*)\]")
MISSING: Any = object()  # a path that leads nowhere in this row


@dataclass(frozen=True)
class FieldPath:
    text: str
    steps: tuple[str | int | None, ...]  # a key, a list index, or None for "every element"

    @property
    def plain(self) -> bool:
        """A single field name."""
        return len(self.steps) == 1 and isinstance(self.steps[0], str)


def parse(text: str) -> FieldPath:
    """The steps of a path; ValueError when it is not one."""
    steps: list[str | int | None] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or (position == 0 and text.startswith(".")):
            raise ValueError(f"{text!r} is not a field path (e.g. meta.video_id, choices[].text)")
        key, index = match.groups()
        steps.append(key if key is not None else (int(index) if index else None))
        position = match.end()
    if not steps:
        raise ValueError("an empty field path")
    return FieldPath(text, tuple(steps))


def _walk(value: Any, steps: Sequence[str | int | None]) -> Any:
    for n, step in enumerate(steps):
        if step is None:  # every element
            if not isinstance(value, list):
                return MISSING
            found = [_walk(item, steps[n + 1 :]) for item in value]
            return MISSING if any(v is MISSING for v in found) else found
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return MISSING
            value = value[step]
        elif isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


def plain_name(text: str) -> bool:
    """A single field name (not a path into the row, not a template)."""
    try:
        return "{" not in text and parse(text).plain
    except ValueError:
        return False


def lookup(row: Mapping[str, Any], path: str | FieldPath) -> Any:
    """The value at `path` in the row, or MISSING."""
    if isinstance(path, str):
        if path in row:
            return row[path]
        try:
            path = parse(path)
        except ValueError:
            return MISSING
    if path.text in row:
        return row[path.text]
    return _walk(row, path.steps)


def missing_part(row: Mapping[str, Any], path: str) -> str:
    """Where `path` stops in this row: "the field 'meta'" or "'video' in 'meta'"."""
    try:
        steps = parse(path).steps
    except ValueError:
        return f"the field {path!r}"
    for n in range(1, len(steps) + 1):
        if _walk(row, steps[:n]) is MISSING:
            if n == 1:
                return f"the field {steps[0]!r}"
            return f"{steps[n - 1]!r} in {_text(steps[: n - 1])!r}"
    return f"the field {path!r}"


def where_it_is(row: Mapping[str, Any], name: str) -> str:
    """Where a field the row lacks may be, and the key that reads it from there."""
    for key, value in row.items():
        if key.startswith("_"):
            continue
        records = isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
        if records and any(name in v for v in value):
            return (
                f"; this row's field {key!r} holds a list of {len(value)} records with "
                f'{name!r}: explode = "{key}" reads one row per element'
            )
        if isinstance(value, dict) and name in value:
            return f'; it is in {key!r}: name it "{key}.{name}"'
    shown = ", ".join(k for k in row if not k.startswith("_"))[:200]
    return f" (this row's fields: {shown})"


def _text(steps: Sequence[str | int | None]) -> str:
    out = ""
    for step in steps:
        if step is None:
            out += "[]"
        elif isinstance(step, int):
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


class _PathFormatter(string.Formatter):
    """str.format with `{path}` read by `lookup` (a `{field}` that is missing: KeyError), each
    filled-in value passed through `escape`."""

    def __init__(self, escape: Callable[[str], str] = str) -> None:
        self.escape = escape

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        value = lookup(kwargs, field_name)
        if value is MISSING:
            raise KeyError(field_name)
        return value, field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        return self.escape(super().format_field(value, format_spec))


_FORMATTER = _PathFormatter()
_GLOB_FORMATTER = _PathFormatter(glob.escape)  # values are names, never wildcards


@cache
def is_glob(template: str) -> bool:
    """Whether a template's own text (not what fills it) holds wildcards: * ? ["""
    return any(c in text for text, *_ in string.Formatter().parse(template) for c in "*?[")


def fields_of(template: str) -> list[str]:
    """The paths a template fills; ValueError when it is not a template (a stray brace) or a
    `{...}` is not a path."""
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    for name in names:
        parse(name)
    return names


def render(template: str, row: Mapping[str, Any], what: str, glob_values: bool = False) -> str:
    """`template` with the row's `{path}`s filled in (`glob_values`: escaped for a glob
    pattern); DataError naming what is missing."""
    try:
        return (_GLOB_FORMATTER if glob_values else _FORMATTER).vformat(template, (), row)
    except KeyError as e:
        part = missing_part(row, str(e.args[0]))
        raise DataError(f"{what} needs {part}, which this row lacks") from None
    except (IndexError, AttributeError, ValueError, TypeError) as e:
        raise DataError(f"{what} cannot be filled from this row ({e})") from None
