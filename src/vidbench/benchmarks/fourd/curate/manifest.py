"""The list of assets to render: a manifest of uid -> file, in the Objaverse-XL style.

Two forms: JSON Lines with one `{"uid": ..., "path": ...}` per line (`sha256` and `local_path`
are accepted for them too), as `vidbench synth 4d --assets` writes; or one JSON object mapping
uid -> path, as objaverse-xl's `download_objects` returns. Relative paths are relative to the
manifest's folder. Entries that cannot be rendered (a malformed line, a missing file, a uid seen
before) are returned as problems naming the uid, the file and the line; the others go on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from vidbench.benchmarks.fourd.curate.asset_files import NOT_FOLLOWED, referenced
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import json_lines, json_members
from vidbench.media.cache import file_digest

FORMATS = (".glb", ".gltf", ".fbx", ".obj")
SAFE_UID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # becomes a folder name


@dataclass(frozen=True)
class Asset:
    uid: str
    path: Path

    def fingerprint(self) -> dict[str, object]:
        """What the asset is, for a render.json: its file's size, modification time and content
        hash, and the same of each file it references (asset_files.py: a glTF's buffers and
        images, an .obj's materials and textures), "missing" or "not followed" for the others."""
        references: dict[str, object] = {}
        for name, path in referenced(self.path).items():
            if path is None:
                references[name] = NOT_FOLLOWED
            else:
                references[name] = _file_fingerprint(path) if path.is_file() else MISSING
        return {**_file_fingerprint(self.path), "references": references}

    def matches(self, recorded: object) -> bool:
        """Whether the asset is still the one a render.json's `asset` fingerprint names: its
        file and each file it referenced (by size and time, else by bytes); a referenced file
        that was missing must still be. A render.json without a fingerprint, or without its
        references (an older vidbench's), is taken to match on what it lacks."""
        if not isinstance(recorded, dict):
            return True
        if not _file_matches(self.path, recorded):
            return False
        references = recorded.get("references")
        if not isinstance(references, dict):
            return True
        folder = self.path.parent.resolve()
        for name, was in references.items():
            if was == NOT_FOLLOWED:
                continue
            try:
                path = (folder / str(name)).resolve()
            except (OSError, ValueError):  # an edited render.json (a NUL, a loop of links)
                return False
            if not path.is_relative_to(folder):  # an edited render.json: not ours to read
                return False
            if was == MISSING:
                if path.is_file():  # there now (a folder or a device never counts)
                    return False
            elif not _file_matches(path, was):
                return False
        return True


MISSING = "missing"


def _file_fingerprint(path: Path) -> dict[str, int | str]:
    """A file's size, modification time and content hash."""
    stat = path.stat()
    return {"bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns, "blake2b": file_digest(path)}


def _file_matches(path: Path, recorded: object) -> bool:
    """Whether the file is the one `recorded` (a _file_fingerprint) names: the same size, and
    the same time or else the same bytes."""
    if not isinstance(recorded, dict):
        return False
    try:
        stat = path.stat()
    except OSError:
        return False
    if recorded.get("bytes") != stat.st_size:
        return False
    if recorded.get("mtime_ns") == stat.st_mtime_ns:
        return True
    return recorded.get("blake2b") == file_digest(path)


@dataclass(frozen=True)
class AssetProblem:
    """An asset dropped before or during rendering, and why."""

    uid: str
    file: str
    reason: str  # short, countable: "missing file", "duplicate uid", "crashed", ...
    detail: str = ""

    def to_json(self) -> dict:
        return {"uid": self.uid, "file": self.file, "reason": self.reason, "detail": self.detail}

    def message(self) -> str:
        """`uid (file): reason: detail`, leaving out what the entry did not give."""
        named = " ".join(x for x in (self.uid, f"({self.file})" if self.file else "") if x)
        said = self.reason + (f": {self.detail}" if self.detail else "")
        return f"{named}: {said}" if named else said


# (where, uid, file, what is wrong with the line when it is not an object): one entry
Entry = tuple[str, object, object, str]


def _entries(path: Path) -> list[Entry]:
    """(where, uid, file, error) per entry, before validation."""
    if path.suffix == ".json":  # entry by entry: a broken one is named, the others read
        try:
            read = json_members(path)
        except DataError as e:
            raise ConfigError(str(e)) from None
        if read.kind is not dict:
            raise ConfigError(f"{path}: expected an object mapping uid -> file")
        if read.problems:
            raise ConfigError(f"{path}: {'; '.join(read.problems)}")
        return [
            (f"{path}: {m.key!r}", m.key, m.value, "")
            if m.error is None
            else (f"{path}:{m.line}", m.key, None, m.error)
            for m in read.members
        ]
    entries: list[Entry] = []
    for line in json_lines(path):  # line by line: not UTF-8 or not JSON costs that line only
        where = f"{path}:{line.number}"
        record = line.value
        if line.error is not None:
            entries.append((where, None, None, line.error))
        elif not isinstance(record, dict):
            entries.append((where, None, None, f"not a JSON object: {json.dumps(record)[:60]}"))
        else:
            uid = record.get("uid", record.get("sha256"))
            entries.append((where, uid, record.get("path", record.get("local_path")), ""))
    return entries


def read_manifest(path: Path) -> tuple[list[Asset], list[AssetProblem]]:
    """The manifest's assets and the entries that cannot be rendered."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"manifest not found: {path}")
    entries = _entries(path)
    if not entries:
        raise ConfigError(f"{path}: an empty manifest (no uid and path in it)")
    assets: dict[str, Asset] = {}
    seen: dict[str, str] = {}  # uid -> the file first given for it
    problems: list[AssetProblem] = []
    for where, uid, file, error in entries:
        if error:
            problems.append(AssetProblem("", "", "malformed entry", f"{where}: {error}"))
            continue
        if not isinstance(uid, str) or not isinstance(file, str) or not uid or not file:
            given = ", ".join(f"{k} {v!r}" for k, v in (("uid", uid), ("path", file)) if v)
            detail = f"{where}: needs uid and path" + (f" (has {given})" if given else "")
            problems.append(AssetProblem(_text(uid), _text(file), "malformed entry", detail))
            continue
        if not SAFE_UID.match(uid):
            problems.append(
                AssetProblem(uid, file, "malformed entry", f"{where}: uid unfit for a folder name")
            )
            continue
        asset_path = Path(file) if Path(file).is_absolute() else path.parent / file
        if uid in seen:
            problems.append(
                AssetProblem(uid, file, "duplicate uid", f"{where}: already given for {seen[uid]}")
            )
            continue
        seen[uid] = file
        if not asset_path.is_file():
            problems.append(
                AssetProblem(
                    uid, file, "missing file", f"{where}: no file at {asset_path.resolve()}"
                )
            )
        elif asset_path.suffix.lower() not in FORMATS:
            problems.append(
                AssetProblem(
                    uid, str(asset_path), "unsupported format", f"{where}: not {', '.join(FORMATS)}"
                )
            )
        else:
            assets[uid] = Asset(uid, asset_path)
    return list(assets.values()), problems


def _text(value: object) -> str:
    """A field of a manifest entry as text; "" when it is absent."""
    return "" if value is None else str(value)
