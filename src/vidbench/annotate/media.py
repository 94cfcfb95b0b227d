"""Which file `/media/REL` may serve: a video under the project's data folder.

REL is checked as text first (no NUL or other control character, no absolute path, drive, `\\`,
`..`, `.` or empty part, at most MAX_PATH characters), then walked part by part on disk: a
symlink leading out of the folder it is in is followed only when a project tool made it and it
leads where the tool recorded (a ReviewAdapter's `link_target`, e.g.
benchmarks/fourd/review/links.py), and then only inside that folder. Every refusal is a
`BadMediaPath` (HTTP 400), a well-formed path to no file a `MissingVideo` (404): an odd path
never surfaces as a server error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from vidbench.core.errors import DataError

VIDEO_SUFFIXES = (".mp4", ".webm", ".mkv", ".mov", ".m4v")
MAX_PATH = 1024


class BadMediaPath(DataError):
    """Not a path the media route serves."""


class MissingVideo(DataError):
    """A well-formed path to a video that is not there."""


def _parts(rel: str) -> tuple[str, ...]:
    if not rel or len(rel) > MAX_PATH:
        raise BadMediaPath(f"media paths are 1 to {MAX_PATH} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in rel):
        raise BadMediaPath("a media path has no control characters")
    if rel.startswith("/") or "\\" in rel or ":" in rel:
        raise BadMediaPath("media paths are relative to the project's data folder")
    parts = tuple(rel.split("/"))
    if any(p in ("", ".", "..") for p in parts):
        raise BadMediaPath("media paths are relative to the project's data folder")
    if PurePosixPath(rel).suffix.lower() not in VIDEO_SUFFIXES:
        raise BadMediaPath("not a video of the project's data folder")
    return parts


def video_path(root: Path, rel: str, recorded: Callable[[Path], Path | None]) -> Path:
    """The file REL names under `root`; `recorded(link)` is the target a project tool recorded
    for a link (links.recorded_target), None for any other link."""
    parts = _parts(rel)
    try:
        allowed = here = root.resolve()
        for part in parts:
            step = here / part
            if step.is_symlink():
                target = step.resolve()
                if not target.is_relative_to(allowed):
                    if recorded(step) != target:
                        raise BadMediaPath("not a video of the project's data folder")
                    allowed = target  # inside the tool's folder from here on, and nowhere else
                step = target
            here = step
        if not here.is_relative_to(allowed) or here.suffix.lower() not in VIDEO_SUFFIXES:
            raise BadMediaPath("not a video of the project's data folder")
        if not here.is_file():
            raise MissingVideo(f"missing video: {rel}")
    except (OSError, ValueError, RuntimeError) as e:  # too long, a link loop, no permission
        raise BadMediaPath(f"not a readable path ({type(e).__name__})") from e
    return here
