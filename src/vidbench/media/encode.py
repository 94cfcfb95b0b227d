"""Writing RGB frames to an H.264 mp4 with PyAV (deterministic output for identical input)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import av
import numpy as np


def _even(frame: np.ndarray) -> np.ndarray:
    """Pad an HxWx3 frame by repeating its last row/column so both sides are even."""
    h, w = frame.shape[:2]
    ph, pw = h % 2, w % 2
    if ph or pw:
        frame = np.pad(frame, ((0, ph), (0, pw), (0, 0)), mode="edge")
    return frame


def write_mp4(
    path: Path,
    frames: Iterable[np.ndarray],
    fps: int = 24,
    crf: int = 18,
    *,
    preset: str = "veryfast",
) -> None:
    """Encode ``frames`` (HxWx3 uint8 RGB, all the same size) to ``path`` as H.264/yuv420p mp4.

    Odd widths/heights are padded by one edge row/column (yuv420p needs even sizes). The encoder
    runs single-threaded, so the same frames always give the same bitstream. The mp4 stream's
    frame count equals the number of frames written. Raises ``ValueError`` on bad frames or when
    no frame is given.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    container = av.open(str(path), mode="w", format="mp4")
    try:  # a failed write leaves no partial file behind
        stream = None
        shape: tuple[int, ...] | None = None
        for count, frame in enumerate(frames):
            arr = np.asarray(frame)
            if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 3:
                raise ValueError(
                    f"{path}: frame {count} must be HxWx3 uint8 RGB, "
                    f"got shape {arr.shape} dtype {arr.dtype}"
                )
            if shape is None:
                shape = arr.shape
                stream = container.add_stream("libx264", rate=fps)
                stream.width = arr.shape[1] + arr.shape[1] % 2
                stream.height = arr.shape[0] + arr.shape[0] % 2
                stream.pix_fmt = "yuv420p"
                stream.options = {"crf": str(crf), "preset": preset}
                stream.codec_context.thread_count = 1
            elif arr.shape != shape:
                raise ValueError(f"{path}: frame {count} has shape {arr.shape}, expected {shape}")
            vf = av.VideoFrame.from_ndarray(np.ascontiguousarray(_even(arr)), format="rgb24")
            assert stream is not None  # made by the first frame
            container.mux(stream.encode(vf))
        if stream is None:
            raise ValueError(f"{path}: no frames to write")
        container.mux(stream.encode(None))
    except BaseException:
        container.close()
        path.unlink(missing_ok=True)
        raise
    container.close()
