"""Thumbnails of the frames a model saw, for the report's sample browser.

The frames come from `media/frames.load_frames` with the run's own FrameSpec, so they are the
very images the model was sent (read from the frame cache where it has them, else decoded from
the videos). Each is shrunk to a small JPEG named by the hash of its bytes under
REPORT_DIR/thumbs/ (a frame two runs share is written once). A sample whose videos are gone gets
its error message instead, and the page shows its frames as missing.

A report built again into the same folder makes nothing it has: REPORT_DIR/thumbs/strips.json
(`StripIndex`) keeps each sample's frames by a key of its videos (path, size, modification time)
and FrameSpec, and a strip whose thumbnails are all there is used as it is, without reading a
frame.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from PIL import Image

from vidbench.core.errors import VidbenchError
from vidbench.core.files import Json, write_atomic
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame, video_sources
from vidbench.media.spec import FrameSpec

THUMBS_DIR = "thumbs"
STRIPS_FILE = "strips.json"
FRAME_SIDE = 160  # longest side of one frame's thumbnail
GRID_SIDE = 480  # longest side of a grid image's thumbnail
STRIP_VERSION = 1  # of the strips' shape and thumbnails: another version makes them again


def strip_key(media: MediaRef, spec: FrameSpec) -> str | None:
    """What a sample's strip depends on: its videos (resolved path, size, modification and
    change times: ctime, which no tool sets back as `cp -p` does mtime, tells a video rewritten
    in place with its old size and mtime), its window and the FrameSpec; None when a video is
    not there (nothing to keep)."""
    parts: list[Json] = [STRIP_VERSION, FRAME_SIDE, GRID_SIDE, spec.as_dict()]
    parts += [media.start_s, media.end_s]
    for view in spec.views:
        path = media.videos.get(view)
        try:
            stat = path.stat() if path is not None else None
        except OSError:
            stat = None
        if stat is None:
            return None
        assert path is not None  # stat is None without one
        parts.append([view, str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns])
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class StripFrame(TypedDict):
    """One thumbnail of a strip: the frame it shows, and its path or why it has none."""

    view: int
    index: int
    t: float
    src: NotRequired[str]
    error: NotRequired[str]
    tiles: NotRequired[list[str]]  # a grid image: the frames it tiles


class Strip(TypedDict):
    """A sample's frames on the page: "views" (a row per view) or "grid" (the one image)."""

    layout: str
    frames: list[StripFrame]
    error: NotRequired[str]
    sources: NotRequired[dict[str, str]]  # view -> the digest of the video its frames are from


@dataclass
class StripIndex:
    """The strips a report folder holds (REPORT_DIR/thumbs/strips.json), by `strip_key`."""

    out: Path
    strips: dict[str, Strip] = field(default_factory=dict)
    reused: int = 0  # strips this build took from the index
    made: int = 0  # strips this build made (and put in the index when complete)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, out: Path) -> StripIndex:
        try:
            strips = json.loads((out / THUMBS_DIR / STRIPS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            strips = {}  # none yet, or unreadable: everything is made again
        return cls(out, strips if isinstance(strips, dict) else {})

    def get(self, key: str) -> Strip | None:
        """The strip kept under `key` when every one of its thumbnails is still there."""
        with self._lock:
            strip = self.strips.get(key)
        if not isinstance(strip, dict) or not isinstance(strip.get("frames"), list):
            return None
        for frame in strip["frames"]:
            if not isinstance(frame, dict) or not (self.out / str(frame.get("src"))).is_file():
                return None
        with self._lock:
            self.reused += 1
        return strip

    def put(self, key: str | None, strip: Strip, complete: bool) -> None:
        with self._lock:
            self.made += 1
            if key is not None and complete:
                self.strips[key] = strip

    def save(self) -> None:
        with self._lock:
            text = json.dumps(self.strips, separators=(",", ":"))
        write_atomic(self.out / THUMBS_DIR / STRIPS_FILE, text.encode())


@dataclass(frozen=True)
class Thumbnailer:
    """Writes thumbnails under `out`/thumbs; `cache` is the run's frame cache; `index` (when
    given) holds the strips made before, and gets those made now."""

    out: Path
    cache: FrameCache | None
    index: StripIndex | None = None

    def strip(self, media: MediaRef, spec: FrameSpec) -> Strip:
        """The page's description of a sample's frames: `layout` ("views": one row per view,
        one column per time step; "grid": the one grid image), `frames` (view, index, time,
        thumbnail path) or `error` when they cannot be made."""
        key = strip_key(media, spec) if self.index is not None else None
        known = self.index.get(key) if self.index is not None and key is not None else None
        if known is not None:
            return known
        made = self._make(media, spec)
        if self.index is not None:
            complete = "error" not in made and not any("error" in f for f in made["frames"])
            self.index.put(key, made, complete)
        return made

    def _make(self, media: MediaRef, spec: FrameSpec) -> Strip:
        layout = "grid" if spec.grid else "views"
        try:
            frames = _frames(media, spec, self.cache)
        except (VidbenchError, OSError) as e:
            return {"layout": layout, "frames": [], "error": f"frames not available: {e}"}
        side = GRID_SIDE if spec.grid else FRAME_SIDE
        shown: list[StripFrame] = []
        for frame in frames:
            record: StripFrame = {
                "view": frame.view,
                "index": frame.index,
                "t": frame.time_s,
            }
            try:
                record["src"] = self._write(frame.image.data, side)
            except OSError as e:
                record["error"] = f"thumbnail not written: {e}"
            if frame.tiles:
                record["tiles"] = [f"view {t.view}, frame {t.index}" for t in frame.tiles]
            shown.append(record)
        sources = video_sources([frame.describe() for frame in frames])
        return {
            "layout": layout,
            "frames": shown,
            "sources": {str(v): d for v, d in sources.items()},
        }

    def _write(self, data: bytes, side: int) -> str:
        name = hashlib.blake2b(data + str(side).encode(), digest_size=12).hexdigest() + ".jpg"
        target = self.out / THUMBS_DIR / name[:2] / name
        if not target.is_file():
            with Image.open(io.BytesIO(data)) as image:
                small = image.convert("RGB")
                small.thumbnail((side, side))
                buffer = io.BytesIO()
                small.save(buffer, "JPEG", quality=75)
            write_atomic(target, buffer.getvalue())
        return f"{THUMBS_DIR}/{name[:2]}/{name}"


def _frames(media: MediaRef, spec: FrameSpec, cache: FrameCache | None) -> list[Frame]:
    from vidbench.media.frames import load_frames  # PyAV only when there are frames to make

    return load_frames(media, spec, cache)
