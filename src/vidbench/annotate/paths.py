"""Names that become paths: user names, object uids, uploaded file names.

A name is checked where it enters (`check_name`: one folder or file name, no separator, no
leading dot), and every path built from a name goes through `child`, which gives a file directly
inside the folder or refuses: a name from the database or a browser never leads elsewhere.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from vidbench.core.errors import ConfigError

NAME = re.compile(r"\w[\w.-]{0,63}")  # letters, digits, _ . -, not starting with . or -
UNSAFE = re.compile(r"[^\w.-]")


def is_name(text: str) -> bool:
    return NAME.fullmatch(text) is not None and ".." not in text


def check_name(text: str, what: str) -> str:
    if not is_name(text):
        raise ConfigError(
            f"{what} {text!r}: 1-64 letters, digits, '_', '.' or '-', not starting with '.' "
            "or '-' and without '..' (it becomes a file name)"
        )
    return text


def file_name(stem: str, suffix: str) -> str:
    """`stem` + `suffix` as one safe file name: characters outside letters, digits, `_ . -`
    become `_`, with a short hash of the original when anything changed (no two names meet)."""
    safe = UNSAFE.sub("_", stem).lstrip(".-").replace("..", "_")
    if safe != stem or not safe:
        safe = f"{safe[:64]}-{hashlib.sha256(stem.encode()).hexdigest()[:8]}"
    return safe + suffix


def child(folder: Path, name: str) -> Path:
    """folder/name, refused unless it is a file name directly inside `folder`."""
    path = folder / name
    if "/" in name or "\\" in name or name in ("", ".", "..") or path.parent != folder:
        raise ConfigError(f"{name!r} is not a file name inside {folder}")
    return path
