"""The files an asset is made of besides its main file, so that render.json can tell when one of
them changed: a glTF's (or a .glb's) external buffers and images (its `buffers[].uri` and
`images[].uri`), an .obj's material libraries (`mtllib`) and the texture maps they name (`map_Kd`,
`bump`, ...). An .fbx is read as its one file (its texture paths are inside the binary).

A reference is followed only to a regular file inside the asset's folder (below it, once `..` and
links are resolved): a `data:` uri is part of the main file, and a uri with a scheme (`http:`,
`file:`), an absolute path or one leading outside the folder is recorded as not followed (so a
manifest cannot make vidbench read any file on the machine). A referenced file that is missing
is recorded as missing: when it appears, the object is rendered again.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Collection
from pathlib import Path
from urllib.parse import unquote

GLB_MAGIC = b"glTF"
GLB_JSON_CHUNK = 0x4E4F534A
MTL_MAPS = frozenset(
    {"map_ka", "map_kd", "map_ks", "map_ke", "map_ns", "map_d", "map_bump", "bump", "disp",
     "decal", "refl", "norm", "map_pr", "map_pm", "map_ps", "map_tr", "map_ao"}
)  # fmt: skip
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
NOT_FOLLOWED = "not followed"  # the reason recorded for a uri outside the folder


def referenced(asset: Path) -> dict[str, Path | None]:
    """Each file the asset references, by its path relative to the asset's folder (POSIX
    spelling), resolved; None for a reference not followed (see the module docstring). An asset
    that cannot be read or parsed references nothing (its renderer says why)."""
    suffix = asset.suffix.lower()
    folder = asset.parent.resolve()
    try:
        if suffix in (".gltf", ".glb"):
            return _resolved(folder, _gltf_uris(asset))
        if suffix == ".obj":
            return _obj_files(asset, folder)
    except (OSError, ValueError, RecursionError, struct.error):  # unreadable, not JSON, cut
        return {}
    return {}


def _resolved(base: Path, uris: list[str], root: Path | None = None) -> dict[str, Path | None]:
    """uri -> the file it names relative to `base` (keyed by its path below `root`, default
    `base`); the uri itself -> None when it leads elsewhere. `data:` uris are left out: their
    bytes are in the file that holds them."""
    root = root or base
    found: dict[str, Path | None] = {}
    for uri in uris:
        if uri.startswith("data:"):
            continue
        path = (
            None if _SCHEME.match(uri) or uri.startswith(("/", "\\")) else _inside(base, uri, root)
        )
        key = path.relative_to(root).as_posix() if path is not None else uri
        found[key] = path
    return found


def _inside(base: Path, uri: str, root: Path) -> Path | None:
    """The file `uri` names relative to `base`, resolved, when it lies below `root`."""
    try:
        path = (base / unquote(uri)).resolve()
    except (OSError, ValueError):  # a NUL byte, a loop of links
        return None
    return path if path.is_relative_to(root) else None


def _gltf_json(asset: Path) -> object:
    """The JSON of a .gltf file, or of a .glb's first (JSON) chunk."""
    if asset.suffix.lower() == ".gltf":
        return json.loads(asset.read_bytes())
    with asset.open("rb") as f:
        magic, _version, _length, chunk, kind = struct.unpack("<4sIIII", f.read(20))
        if magic != GLB_MAGIC or kind != GLB_JSON_CHUNK:
            raise ValueError("not a binary glTF")
        return json.loads(f.read(chunk))


def _gltf_uris(asset: Path) -> list[str]:
    doc = _gltf_json(asset)
    if not isinstance(doc, dict):
        return []
    uris: list[str] = []
    for key in ("buffers", "images"):
        items = doc.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("uri"), str):
                uris.append(item["uri"])
    return uris


def _obj_files(asset: Path, folder: Path) -> dict[str, Path | None]:
    """An .obj's material libraries and, for each found, the texture maps it names (relative
    to the library's folder, which must be inside the asset's)."""
    libraries = _resolved(folder, _statements(asset, {"mtllib"}, list))  # one or more names
    found = dict(libraries)
    for library in libraries.values():
        if library is not None and library.is_file():
            maps = _statements(library, MTL_MAPS, _map_file)
            found |= _resolved(library.parent, maps, folder)
    return found


def _statements(
    path: Path, keywords: Collection[str], read: Callable[[list[str]], list[str]]
) -> list[str]:
    """The file names given by the lines of `path` starting with one of `keywords`."""
    names: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        words = line.split()
        if len(words) > 1 and words[0].lower() in keywords:
            names += read(words[1:])
    return names


def _map_file(words: list[str]) -> list[str]:
    """`map_Kd -s 1 1 1 -clamp on tex file.png`: the file name after the options (names with
    spaces kept whole)."""
    rest = list(words)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0).lower()
        if option in ("-imfchan", "-type"):  # one word that is not a number
            rest = rest[1:]
        while rest and (_NUMBER.match(rest[0]) or rest[0].lower() in ("on", "off")):
            rest.pop(0)
    return [" ".join(rest)] if rest else []
