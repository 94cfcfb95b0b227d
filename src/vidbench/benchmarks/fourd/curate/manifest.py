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

from vidbench.core.errors import ConfigError

FORMATS = (".glb", ".gltf", ".fbx", ".obj")
SAFE_UID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # becomes a folder name


@dataclass(frozen=True)
class Asset:
    uid: str
    path: Path


@dataclass(frozen=True)
class Problem:
    """An asset dropped before or during rendering, and why."""

    uid: str
    file: str
    reason: str  # short, countable: "missing file", "duplicate uid", "crashed", ...
    detail: str = ""

    def to_json(self) -> dict:
        return {"uid": self.uid, "file": self.file, "reason": self.reason, "detail": self.detail}

    def message(self) -> str:
        return f"{self.uid} ({self.file}): {self.reason}" + (
            f": {self.detail}" if self.detail else ""
        )


def _entries(path: Path) -> list[tuple[str, object, object]]:
    """(where, uid, file) per entry, before validation."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            mapping = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not JSON ({e})") from None
        if not isinstance(mapping, dict):
            raise ConfigError(f"{path}: expected an object mapping uid -> file")
        return [(f"{path}: {uid!r}", uid, file) for uid, file in mapping.items()]
    entries: list[tuple[str, object, object]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            entries.append((where, None, None))
            continue
        if not isinstance(record, dict):
            entries.append((where, None, None))
            continue
        entries.append(
            (
                where,
                record.get("uid", record.get("sha256")),
                record.get("path", record.get("local_path")),
            )
        )
    return entries


def read_manifest(path: Path) -> tuple[list[Asset], list[Problem]]:
    """The manifest's assets and the entries that cannot be rendered."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"manifest not found: {path}")
    assets: dict[str, Asset] = {}
    seen: dict[str, str] = {}  # uid -> the file first given for it
    problems: list[Problem] = []
    for where, uid, file in _entries(path):
        if not isinstance(uid, str) or not isinstance(file, str) or not uid or not file:
            problems.append(
                Problem(str(uid), str(file), "malformed entry", f"{where}: needs uid and path")
            )
            continue
        if not SAFE_UID.match(uid):
            problems.append(
                Problem(uid, file, "malformed entry", f"{where}: uid unfit for a folder name")
            )
            continue
        asset_path = Path(file) if Path(file).is_absolute() else path.parent / file
        if uid in seen:
            problems.append(
                Problem(uid, file, "duplicate uid", f"{where}: already given for {seen[uid]}")
            )
            continue
        seen[uid] = file
        if not asset_path.is_file():
            problems.append(Problem(uid, str(asset_path), "missing file", where))
        elif asset_path.suffix.lower() not in FORMATS:
            problems.append(
                Problem(
                    uid, str(asset_path), "unsupported format", f"{where}: not {', '.join(FORMATS)}"
                )
            )
        else:
            assets[uid] = Asset(uid, asset_path)
    return list(assets.values()), problems
