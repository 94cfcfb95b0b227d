"""Thumbnails for the lists: the middle frame of an item's video as a small JPEG, made on first
request and kept in PROJECT/thumbnails/ (named by the video's path, size and time, so a changed
video gets a new one). The video is found as the media route finds it (media.py): a path that
route refuses is refused here too."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from vidbench.media.decode import decode_frames, probe
from vidbench.media.images import encode_image

SIDE = 160  # pixels, the longest side
FOLDER = "thumbnails"


def thumbnail(project_path: Path, video: Path) -> Path | bytes:
    """The thumbnail file of `video` (a checked path), made now if it is not there yet; the
    JPEG itself when it cannot be kept (a project folder that cannot be written: read-only, a
    full disk), made again next time. Raises vidbench.core.errors.MediaError when the video
    cannot be decoded."""
    stat = video.stat()
    key = hashlib.sha256(f"{video}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()
    out = project_path / FOLDER / f"{key[:32]}.jpg"
    if out.is_file():
        return out
    info = probe(video)
    middle = info.frame_count // 2
    pixels = decode_frames(video, info, [middle], max_side=SIDE)[middle]
    made = encode_image(pixels, "jpeg", 85)
    try:
        _keep(out, made)
    except OSError:
        return made
    return out


def _keep(out: Path, made: bytes) -> None:
    out.parent.mkdir(exist_ok=True)
    handle, partial = tempfile.mkstemp(suffix=".part", dir=out.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(made)
        os.replace(partial, out)  # whole or absent, also with two requests at once
    except OSError:
        Path(partial).unlink(missing_ok=True)
        raise
