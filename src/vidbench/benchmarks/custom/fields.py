"""What a declared benchmark's row holds besides its options and gold letter (gold.py): its
accepted answers, its videos, its window, its group values. Fields are named by paths (paths.py);
each reader raises DataError saying what is wrong with the row, and the loader turns that into a
Problem naming the row and its file.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import paths
from vidbench.benchmarks.custom.gold import decoded, has_gold, utf8_only
from vidbench.benchmarks.custom.spec import RowSource, Spec
from vidbench.core.errors import DataError
from vidbench.core.files import not_a_file

NO_GROUP = "(none)"  # the group column of a row without a value for a group field
_WINDOW = re.compile(r"^\s*([^\s-][^-]*?)\s*-\s*([^\s-].*?)\s*$")


def value_of(row: Mapping[str, Any], path: str) -> Any:
    """The value at `path`, None when the row has none."""
    value = paths.lookup(row, path)
    return None if value is paths.MISSING else value


def _text(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DataError(f"{what} must be text, got {value!r}")
    return str(value).strip()


def references_of(value: Any) -> tuple[str, ...]:
    """An open-ended row's accepted answers: one text or a list of them (none: no gold)."""
    if not has_gold(value):
        return ()
    values = value
    if isinstance(value, str) and value.strip().startswith("["):  # a list as JSON text (a CSV
        try:  # cell), or a regular expression such as "[Cc]at"
            values = utf8_only(json.loads(value), "the answer")
        except json.JSONDecodeError:
            values = value
    items = values if isinstance(values, list) else [values]
    return tuple(_text(v, "an answer") for v in items)


@cache
def _matches(pattern: str) -> tuple[Path, ...]:
    """The files a video path with wildcards names (cached: many rows share a folder)."""
    path = Path(pattern)
    return tuple(sorted(Path(path.anchor).glob(str(path.relative_to(path.anchor)))))


def _video_file(text: str, data: Path, pattern: bool) -> Path:
    path = Path(text) if Path(text).is_absolute() else data / text
    if not pattern:
        if not path.is_file():
            why = not_a_file(path)
            raise DataError(f"missing video {path}" + ("" if why == "not found" else f" ({why})"))
        return path
    try:
        found = [p for p in _matches(str(path)) if p.is_file()]
    except ValueError as e:  # a pattern pathlib refuses ("**" inside a name)
        raise DataError(f"the video {path} is not a pattern pathlib reads ({e})") from None
    if len(found) != 1:
        what = "no file" if not found else f"{len(found)} files ({found[0].name}, ...)"
        raise DataError(f"the video {path} matches {what}; it must match one")
    return found[0]


class VideoFiles:
    """The video files of one load's rows, by the path text a row gives: rows often share a
    few videos, so each distinct text is parsed (pathlib) and looked for (a stat) once while
    it is among the last `KEPT` found (a missing one is looked for again: it raises)."""

    KEPT = 4096

    def __init__(self, data: Path) -> None:
        self.data = data
        self.file = lru_cache(maxsize=self.KEPT)(self._file)

    def _file(self, text: str, pattern: bool) -> Path:
        return _video_file(text, self.data, pattern)


def videos_of(
    row: Mapping[str, Any], source: RowSource, files: VideoFiles, views: int
) -> dict[int, Path]:
    """The row's videos by view (0, 1, ...), from the path templates (which may hold `*`
    wildcards matching one file) or the videos field, relative to the data folder; DataError
    when one is missing."""
    patterns = [paths.is_glob(t) for t in source.video]
    if source.video:
        texts = [
            paths.render(t, row, f"the video template {t!r}", glob_values=pattern)
            for t, pattern in zip(source.video, patterns, strict=True)
        ]
    else:
        assert source.videos is not None
        value = decoded(value_of(row, source.videos), "videos")
        if value in (None, "", []):
            part = paths.missing_part(row, source.videos)
            raise DataError(f"no video: {part} is missing or empty")
        texts = [
            _text(v, f"a path in {source.videos!r}")
            for v in (value if isinstance(value, list) else [value])
        ]
    if len(texts) != views:
        raise DataError(f"{len(texts)} video(s), the benchmark declares views = {views}")
    patterns = patterns or [False] * len(texts)  # paths given in a field are never patterns
    return {
        view: files.file(text, pattern)
        for view, (text, pattern) in enumerate(zip(texts, patterns, strict=True))
    }


def _seconds(value: Any, name: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds):
        raise DataError(f"{name} must be a finite number of seconds, got {value!r}")
    if seconds < 0:
        raise DataError(f"{name} must not be negative, got {seconds}")
    return seconds


def window_of(row: Mapping[str, Any], spec: Spec) -> tuple[float | None, float | None]:
    """The row's window in seconds, from `start` and `end` or one "start-end" field; (None,
    None) for the whole video. A window that ends before it starts is a DataError."""
    if spec.window is not None:
        value = value_of(row, spec.window)
        if value in (None, ""):
            return None, None
        match = _WINDOW.match(str(value)) if isinstance(value, str) else None
        if match is None:
            raise DataError(f'{spec.window} must be "start-end" in seconds, got {value!r}')
        start: float | None = _seconds(match.group(1), f"{spec.window}'s start")
        end: float | None = _seconds(match.group(2), f"{spec.window}'s end")
    else:
        start, end = None, None
        if spec.start is not None and value_of(row, spec.start) not in (None, ""):
            start = _value_seconds(row, spec.start)
        if spec.end is not None and value_of(row, spec.end) not in (None, ""):
            end = _value_seconds(row, spec.end)
    if start is not None and end is not None and end <= start:
        raise DataError(f"the window ends ({end} s) before it starts ({start} s)")
    return start, end


def _value_seconds(row: Mapping[str, Any], name: str) -> float:
    value = value_of(row, name)
    if isinstance(value, str) and _WINDOW.match(value) and not _is_number(value):
        raise DataError(
            f'{name} holds {value!r}, a whole window: a window in one "start-end" field is '
            f'read with window = "{name}"'
        )
    return _seconds(value, name)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def group_values(row: Mapping[str, Any], groups: Sequence[str]) -> dict[str, list[str]]:
    """Each group field's values: one for a plain value, one per element of a list (the row
    counts in each of those columns), NO_GROUP when the row has none."""
    values = {}
    for name in groups:
        value = decoded(value_of(row, name), f"the group field {name!r}")
        items = value if isinstance(value, list) else [value]
        texts = []
        for item in items:
            if isinstance(item, dict | list):
                raise DataError(f"the group field {name!r} holds {item!r}, not a value")
            if item not in (None, ""):
                texts.append(str(item))
        values[name] = list(dict.fromkeys(texts)) or [NO_GROUP]
    return values
