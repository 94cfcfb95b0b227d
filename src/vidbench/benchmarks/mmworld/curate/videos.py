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
name. Videos whose names give the same id (`a/clip.mp4` and `b/clip.mp4`; also `Clip.mp4` and
`clip.mkv`: ids name folders, and some file systems do not tell case apart) each get a short hash
of their path (relative to the folder or the list file) after it, `clip-1f0e9d2c`: an id depends
on the video's own path, never on the order the files are listed in. Bad entries (a missing file, an
unknown discipline, a malformed line) become Problems naming the entry; the others are listed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, replace
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


def _path_ids(paths: Sequence[Path], root: Path, taken: Collection[str] = ()) -> list[str]:
    """An id for each of `paths`: its safe name, with a hash of its path relative to `root`
    after it when another path (or an id in `taken`) gives the same name up to case."""
    names = [_safe_id(path.stem) for path in paths]
    counts = Counter(name.lower() for name in names)
    clash = {name.lower() for name in taken}
    ids = [
        name
        if counts[name.lower()] == 1 and name.lower() not in clash
        else f"{name}-{_path_hash(path, root)}"
        for name, path in zip(names, paths, strict=True)
    ]
    first: dict[str, object] = dict.fromkeys(clash, "a video_id given in the list")
    for video_id, path in zip(ids, paths, strict=True):  # a file named like another's hashed id
        if first.setdefault(video_id.lower(), path) != path:
            raise ConfigError(
                f"{path}: its id {video_id!r} is another video's ({first[video_id.lower()]}); "
                "rename one, or give each a video_id in a list file"
            )
    return ids


def _path_hash(path: Path, root: Path) -> str:
    """8 hex digits of the path relative to `root` (POSIX spelling), or of the absolute path of
    one outside it."""
    full, base = _lexical(path), _lexical(root)
    key = (full.relative_to(base) if full.is_relative_to(base) else full).as_posix()
    return hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=4).hexdigest()


def _discipline(value: object) -> str | None:
    """A discipline in Table 3's spelling; None for an absent one; DataError for an unknown."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return fields.discipline(value)


def _lexical(path: Path) -> Path:
    """The absolute path with `.` and `..` taken out, links not followed."""
    return Path(os.path.normpath(path.absolute()))


def _from_folder(root: Path, default: str | None, out: Path | None) -> Loaded[VideoEntry]:
    skip = _lexical(out) if out is not None else None
    if skip == _lexical(root):
        raise ConfigError(
            f"--out {out}: the videos folder itself; give another (inside it is fine), or the "
            "output's links to the videos would be listed as more videos by the next run"
        )
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in VIDEO_EXTENSIONS
        and (skip is None or not _lexical(p).is_relative_to(skip))
    )
    entries: list[VideoEntry] = []
    for path, video_id in zip(files, _path_ids(files, root), strict=True):
        folders = path.relative_to(root).parts[:-1]
        try:
            tagged = _discipline(folders[0]) if folders else None
        except DataError:
            tagged = None  # a folder that is not a discipline name: no tag from the layout
        subdiscipline = folders[1] if tagged and len(folders) > 1 else None
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
    video_id = _safe_id(given) if given else ""  # "": from the path, once all are read
    if video_id and video_id.lower() in seen:
        raise DataError(f"duplicate video_id {given!r}")
    if video_id:
        seen.add(video_id.lower())
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
    listed: dict[Path, str] = {}  # the videos without a video_id: where each is first
    for where, row in rows:
        try:
            entry = _entry(row, path.parent, default, seen)
            file = entry.path.resolve()
            if not entry.video_id and file in listed:  # its id would be the first's
                raise DataError(f"the same video as {listed[file]} (give each a video_id)")
            listed.setdefault(file, where)
            entries.append(entry)
        except DataError as e:
            problems.append(Problem(where, path, str(e)))
    unnamed = [i for i, entry in enumerate(entries) if not entry.video_id]
    ids = _path_ids([entries[i].path for i in unnamed], path.parent, seen)
    for i, video_id in zip(unnamed, ids, strict=True):
        entries[i] = replace(entries[i], video_id=video_id)
    return Loaded(entries, problems)


def list_videos(
    source: Path, discipline: str | None = None, out: Path | None = None
) -> Loaded[VideoEntry]:
    """The videos of a folder or list file; `discipline` tags those without one. A folder's
    videos inside `out` (the curation's output folder, placed inside the videos folder) are not
    listed: they are the links the output makes to the videos, not more videos."""
    source = Path(source)
    try:
        default = _discipline(discipline)
    except DataError as e:
        raise ConfigError(f"--discipline: {e}") from None
    if source.is_dir():
        return _from_folder(source, default, out)
    if source.is_file() and source.suffix.lower() in LIST_SUFFIXES:
        return _from_list(source, default)
    if source.is_file() and source.suffix.lower() in VIDEO_EXTENSIONS:
        return Loaded([VideoEntry(_safe_id(source.stem), source, default)], [])
    raise DataError(
        f"{source}: not a folder of videos, a video, or a list file ({', '.join(LIST_SUFFIXES)})"
    )
