"""The source videos in the report: `link` (a relative symlink under REPORT_DIR/videos, the
default: nothing is copied), `copy` (the files themselves, for a report that travels), `none`.

Every video is placed under a name the report makes (a hash of the source path), so the page
links only to files the report wrote, never to a path taken from the data. It is made under a
temporary name (`PLACING_PREFIX`) and renamed: the page never links one, and the next report
into the folder removes those a view killed half-way left (`remove_unplaced`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from vidbench.core.files import TEMPORARY_PREFIX
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.spec import FrameSpec

VideoMode = Literal["link", "copy", "none"]
VIDEO_MODES: tuple[VideoMode, ...] = ("link", "copy", "none")
VIDEOS_DIR = "videos"
PLACING_PREFIX = TEMPORARY_PREFIX  # a video being placed: .tmp-PID-THREAD.mp4 (as write_atomic)
PLAYABLE = {".mp4": ".mp4", ".m4v": ".mp4", ".webm": ".webm", ".mov": ".mov", ".ogv": ".ogv"}


class PlacedVideo(TypedDict):
    """A view's video on the page: its path in the report, or why it is not there."""

    view: int
    src: NotRequired[str]
    error: NotRequired[str]


@dataclass(frozen=True)
class VideoPlacer:
    out: Path
    mode: VideoMode

    def videos(self, media: MediaRef, spec: FrameSpec) -> list[PlacedVideo]:
        """The videos of the views the model saw (all of them, started together, for 4D-Bench),
        each with the report's own path (`src`, cut to the sample's window with a media
        fragment) or an `error` saying why it is not there."""
        if self.mode == "none":
            return []
        placed: list[PlacedVideo] = []
        for view in spec.views:
            source = media.videos.get(view)
            if source is None:
                placed.append({"view": view, "error": f"view {view} has no video"})
                continue
            try:
                src = self._place(Path(source))
            except OSError as e:
                placed.append({"view": view, "error": f"video not available: {e}"})
                continue
            placed.append({"view": view, "src": src + _fragment(media)})
        return placed

    def _place(self, source: Path) -> str:
        if not source.is_file():
            raise FileNotFoundError(f"{source} not found (moved?)")
        suffix = PLAYABLE.get(source.suffix.lower(), ".mp4")
        name = hashlib.blake2b(str(source.resolve()).encode(), digest_size=12).hexdigest()
        target = self.out / VIDEOS_DIR / f"{name}{suffix}"
        if target.exists() and (self.mode == "link" or _same_copy(source, target)):
            return f"{VIDEOS_DIR}/{target.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        # several threads place a view's video at once: a temporary name, then one atomic rename
        tmp = target.with_name(f"{PLACING_PREFIX}{os.getpid()}-{threading.get_ident()}{suffix}")
        if self.mode == "copy":
            shutil.copy2(source, tmp)  # its modification time too: `_same_copy`
        else:
            tmp.unlink(missing_ok=True)
            os.symlink(os.path.relpath(source.resolve(), target.parent), tmp)
        os.replace(tmp, target)
        return f"{VIDEOS_DIR}/{target.name}"


def _same_copy(source: Path, copy: Path) -> bool:
    """`copy` is a copy of `source` as it is now (same size and modification time): a video
    edited in place since the report copied it is copied again, never shown as it was beside
    thumbnails made from it as it is; a link of an earlier `--videos link` build is no copy
    (the report would not travel)."""
    if copy.is_symlink():
        return False
    now, copied = source.stat(), copy.stat()
    return now.st_size == copied.st_size and now.st_mtime_ns == copied.st_mtime_ns


def remove_unplaced(out: Path) -> list[Path]:
    """Remove the videos (copies or links) a view killed while placing them left under their
    temporary names in REPORT_DIR/videos. Call it only while this process holds the report
    folder alone (view/build.py), or a live view's video goes. The files removed."""
    removed = []
    with contextlib.suppress(OSError):  # no videos folder: nothing to clear
        for entry in os.scandir(out / VIDEOS_DIR):
            if entry.name.startswith(PLACING_PREFIX) and not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):  # gone meanwhile
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _fragment(media: MediaRef) -> str:
    """`#t=start,end` for a clip cut out of a longer video (the media fragment browsers seek to)."""
    if media.start_s is None and media.end_s is None:
        return ""
    start = f"{media.start_s or 0:g}"
    return f"#t={start}" + ("" if media.end_s is None else f",{media.end_s:g}")


def video_digests(media: MediaRef, spec: FrameSpec, cache: FrameCache) -> dict[int, str]:
    """The digest of each view's video as it is now (remembered in the frame cache by its stat,
    as the run that answered remembered it: a video is read again only when it changed); a
    video that is not there is left out."""
    found: dict[int, str] = {}
    for view in spec.views:
        path = media.videos.get(view)
        if path is not None:
            with contextlib.suppress(OSError):
                found[view] = cache.video_digest(path)
    return found
