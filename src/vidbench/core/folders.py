"""Output folders: made when needed, and a clear error when a path cannot be one."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.errors import ConfigError


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
