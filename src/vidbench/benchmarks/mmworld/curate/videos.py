"""The videos a curation starts from: a folder of local videos, or a list file with tags.

Downloading is out of scope (MMWorld paper, section 3.2: the authors searched YouTube and
YouTube-8M with generated queries, keeping Creative Commons videos); the user brings the files.

- A folder: every video file below it (.mp4, .mkv, .webm, .mov, .avi, .m4v). A first-level
  folder named after a discipline tags the videos inside it, a second-level folder names the
  subdiscipline: `VIDEOS/Science/Chemistry/flame_test.mp4`. Other videos get `--discipline`.
- A list file: `.csv` or `.jsonl` with a `path` (relative to the list file) and optional
  `video_id`, `discipline`, `subdiscipline`, `topic` (the query the video was found with) and
  `url`; or `.txt`, one path per line.

A video's id is its `video_id`, else its file name without the extension, made safe for a file
name; ids are unique (a repeated file name gets `-2`, `-3`, ...). Bad entries (a missing file, an
unknown discipline, a malformed line) become Problems naming the entry; the others are listed.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from vidbench.benchmarks.mmworld import fields
from vidbench.benchmarks.mmworld.loader import VIDEO_EXTENSIONS
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import not_text
from vidbench.tasks.problems import Loaded, Problem

LIST_SUFFIXES = (".csv", ".jsonl", ".txt")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class VideoEntry:
    video_id: str
    path: Path
    discipline: str | None = None  # Table 3's name, e.g. "Art & Sports"
    subdiscipline: str | None = None
    topic: str | None = None
    url: str | None = None

    def as_dict(self) -> dict[str, JsonValue]:
        return asdict(self) | {"path": str(self.path)}


def _safe_id(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("._") or "video"


def _unique(video_id: str, seen: set[str]) -> str:
    candidate, n = video_id, 1
    while candidate in seen:
        n += 1
        candidate = f"{video_id}-{n}"
    seen.add(candidate)
    return candidate


def _discipline(value: object) -> str | None:
    """A discipline in Table 3's spelling; None for an absent one; DataError for an unknown."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return fields.discipline(value)


def _from_folder(root: Path, default: str | None) -> Loaded[VideoEntry]:
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_EXTENSIONS
    )
    entries: list[VideoEntry] = []
    seen: set[str] = set()
    for path in files:
        folders = path.relative_to(root).parts[:-1]
        try:
            tagged = _discipline(folders[0]) if folders else None
        except DataError:
            tagged = None  # a folder that is not a discipline name: no tag from the layout
        subdiscipline = folders[1] if tagged and len(folders) > 1 else None
        video_id = _unique(_safe_id(path.stem), seen)
        entries.append(VideoEntry(video_id, path, tagged or default, subdiscipline))
    return Loaded(entries, [])


def _rows(path: Path) -> list[tuple[str, JsonValue | DataError]]:
    """(where, row) for each entry of a list file; a row is a dict (or a str for .txt), or the
    DataError of a line that is not one (not UTF-8, not JSON): that line only is lost."""
    text = path.read_bytes().decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = enumerate(csv.DictReader(text.splitlines()), 2)
        return [(f"line {i}", _checked_row(row)) for i, row in rows]
    lines = [(f"line {i}", line.strip()) for i, line in enumerate(text.splitlines(), 1)]
    lines = [(where, line) for where, line in lines if line and not line.startswith("#")]
    out: list[tuple[str, JsonValue | DataError]] = []
    for where, line in lines:
        bad = not_text(line)
        if bad is not None:
            out.append((where, DataError(f"not UTF-8 text ({bad})")))
        elif suffix == ".txt":
            out.append((where, line))
        else:
            try:
                out.append((where, json.loads(line)))
            except json.JSONDecodeError as e:
                out.append((where, DataError(f"malformed JSON: {e.msg}")))
    return out


def _checked_row(row: dict[str, str]) -> JsonValue | DataError:
    """A CSV row, or the DataError naming its column that is not UTF-8 text."""
    for column, value in row.items():
        bad = not_text(value) if isinstance(value, str) else None
        if bad is not None:
            return DataError(f"{column} is not UTF-8 ({bad})")
    return {column: value for column, value in row.items()}  # as JSON values


def _entry(row: Any, base: Path, default: str | None, seen: set[str]) -> VideoEntry:
    if isinstance(row, Exception):
        raise row
    row = {"path": row} if isinstance(row, str) else row
    if not isinstance(row, dict) or not str(row.get("path") or "").strip():
        raise DataError("entry has no path")
    path = Path(str(row["path"]).strip())
    path = path if path.is_absolute() else base / path
    if not path.is_file():
        raise DataError(f"video file not found: {path}")
    if path.suffix.lower() not in VIDEO_EXTENSIONS:
        raise DataError(
            f"{path}: not a video file type MMWorld reads ({', '.join(VIDEO_EXTENSIONS)})"
        )
    given = str(row.get("video_id") or "").strip()
    if given and _safe_id(given) in seen:
        raise DataError(f"duplicate video_id {given!r}")
    video_id = _unique(_safe_id(given or path.stem), seen)
    text = {k: (str(row.get(k) or "").strip() or None) for k in ("subdiscipline", "topic", "url")}
    discipline = _discipline(row.get("discipline")) or default
    return VideoEntry(video_id, path, discipline, text["subdiscipline"], text["topic"], text["url"])


def _from_list(path: Path, default: str | None) -> Loaded[VideoEntry]:
    try:
        rows = _rows(path)
    except (OSError, csv.Error) as e:
        raise DataError(f"{path}: cannot read the video list ({e})") from e
    entries: list[VideoEntry] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for where, row in rows:
        try:
            entries.append(_entry(row, path.parent, default, seen))
        except DataError as e:
            problems.append(Problem(where, path, str(e)))
    return Loaded(entries, problems)


def list_videos(source: Path, discipline: str | None = None) -> Loaded[VideoEntry]:
    """The videos of a folder or list file; `discipline` tags those without one."""
    source = Path(source)
    try:
        default = _discipline(discipline)
    except DataError as e:
        raise ConfigError(f"--discipline: {e}") from None
    if source.is_dir():
        return _from_folder(source, default)
    if source.is_file() and source.suffix.lower() in LIST_SUFFIXES:
        return _from_list(source, default)
    if source.is_file() and source.suffix.lower() in VIDEO_EXTENSIONS:
        return Loaded([VideoEntry(_safe_id(source.stem), source, default)], [])
    raise DataError(
        f"{source}: not a folder of videos, a video, or a list file ({', '.join(LIST_SUFFIXES)})"
    )
