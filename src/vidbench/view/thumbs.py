"""Thumbnails of the frames a model saw, for the report's sample browser.

The frames come from `media/frames.load_frames` with the run's own FrameSpec, so they are the
very images the model was sent (read from the frame cache where it has them, else decoded from
the videos). Each is shrunk to a small JPEG named by the hash of its bytes under
REPORT_DIR/thumbs/ (a frame two runs share is written once). A sample whose videos are gone gets
its error message instead, and the page shows its frames as missing.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from vidbench.core.errors import VidbenchError
from vidbench.core.files import write_atomic
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec

THUMBS_DIR = "thumbs"
FRAME_SIDE = 160  # longest side of one frame's thumbnail
GRID_SIDE = 480  # longest side of a grid image's thumbnail


@dataclass(frozen=True)
class Thumbnailer:
    """Writes thumbnails under `out`/thumbs; `cache` is the run's frame cache."""

    out: Path
    cache: FrameCache | None

    def strip(self, media: MediaRef, spec: FrameSpec) -> dict[str, Any]:
        """The page's description of a sample's frames: `layout` ("views": one row per view,
        one column per time step; "grid": the one grid image), `frames` (view, index, time,
        thumbnail path) or `error` when they cannot be made."""
        layout = "grid" if spec.grid else "views"
        try:
            frames = _frames(media, spec, self.cache)
        except (VidbenchError, OSError) as e:
            return {"layout": layout, "frames": [], "error": f"frames not available: {e}"}
        side = GRID_SIDE if spec.grid else FRAME_SIDE
        shown = []
        for frame in frames:
            record: dict[str, Any] = {"view": frame.view, "index": frame.index, "t": frame.time_s}
            try:
                record["src"] = self._write(frame.image.data, side)
            except OSError as e:
                record["error"] = f"thumbnail not written: {e}"
            if frame.tiles:
                record["tiles"] = [f"view {t.view}, frame {t.index}" for t in frame.tiles]
            shown.append(record)
        return {"layout": layout, "frames": shown}

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
