"""Names that become paths: user names, object uids, uploaded file names.

A name is checked where it enters (`check_name`: one folder or file name, no separator, no
leading dot), and every path built from a name goes through `child`, which gives a file directly
inside the folder or refuses: a name from the database or a browser never leads elsewhere.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vidbench.core.errors import ConfigError

NAME = re.compile(r"\w[\w.-]{0,63}")  # letters, digits, _ . -, not starting with . or -
UNSAFE = re.compile(r"[^\w.-]")
MAX_BYTES = 200  # of a stem, in UTF-8: a file system takes 255 a name (suffix and hash too)


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
    become `_`, and a short hash of the original is added when anything changed (no two names
    meet), the rest cut to 64 characters; so is a stem over MAX_BYTES (an uploaded file's name
    may be longer than a file system takes, and a letter may take 4 bytes)."""
    safe = UNSAFE.sub("_", stem).lstrip(".-").replace("..", "_")
    if safe != stem or not safe or len(safe.encode()) > MAX_BYTES:
        safe = safe[:64]
        while len(safe.encode()) > MAX_BYTES:
            safe = safe[:-1]
        safe = f"{safe}-{hashlib.sha256(stem.encode('utf-8', 'replace')).hexdigest()[:8]}"
    return safe + suffix


def child(folder: Path, name: str) -> Path:
    """folder/name, refused unless it is a file name directly inside `folder`."""
    path = folder / name
    if "/" in name or "\\" in name or name in ("", ".", "..") or path.parent != folder:
        raise ConfigError(f"{name!r} is not a file name inside {folder}")
    return path


@contextmanager
def writing_into(folder: Path, what: str) -> Iterator[Path]:
    """Writing `what` (an export, an upload) into `folder`: a folder that cannot be written
    (read-only, a file of that name, no permission) is a ConfigError naming it, never a
    traceback."""
    try:
        yield folder
    except OSError as e:
        why = f"{e.filename or folder}: {e.strerror or e}"
        raise ConfigError(f"cannot write {what} into {folder}: {why}") from None
