"""Writing RGB frames to an H.264 mp4 with PyAV (deterministic output for identical input).

x264 runs single-threaded and, on a CPU with AVX-512, with its functions up to AVX2 only. Its
AVX-512 ``mbtree_propagate_list`` (x264 core 165, common/x86/mc-a2.asm: macroblock-tree rate
control) takes a row's macroblocks 8 at a time and masks the lanes by where their motion vector
points, not by the row's length: on a frame whose width is not a multiple of 128 pixels, the lanes
past a row's end read the vectors and costs past it, and past the last row bytes x264 never wrote.
Where those bytes are left over from earlier work in the process (freed buffers of a decode, an
image conversion, a numpy array) and point back into the frame, their cost is added to a real
macroblock's: the same frames get other quantizers, another bitstream, pixels a step apart
(in a fresh process the bytes are zero, their lanes point outside the frame, and nothing is
added). x264's AVX2 functions give the same bitstream as the AVX-512 ones in a fresh process.
"""

from __future__ import annotations

import functools
import importlib
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


def _cpu_features() -> dict[str, bool]:
    """numpy's run-time CPU detection (its module is numpy._core in numpy 2, numpy.core in 1)."""
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            return dict(importlib.import_module(module).__cpu_features__)
        except (ImportError, AttributeError):
            continue
    return {}  # pragma: no cover - a numpy without it


@functools.cache
def _x264_options() -> dict[str, str]:
    """``asm=AVX2`` where x264 would use its AVX-512 functions (AVX-512 F, CD, BW, DQ and VL with
    the OS's support: numpy's ``AVX512_SKX``; such a CPU has all that x264 names ``AVX2``)."""
    return {"x264-params": "asm=AVX2"} if _cpu_features().get("AVX512_SKX") else {}


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
    runs single-threaded and without x264's AVX-512 functions (the module's docstring says why),
    so the same frames always give the same bitstream, whatever ran before in the process. The mp4
    stream's frame count equals the number of frames written. Raises ``ValueError`` (naming the
    file) on an ``fps`` that is no whole number >= 1, on bad frames and when no frame is given.
    """
    path = Path(path)
    if isinstance(fps, bool) or not isinstance(fps, int) or fps < 1:  # 0 gave 24 fps unsaid
        raise ValueError(f"{path}: fps must be a whole number of frames a second, got {fps!r}")
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
                stream.options = {"crf": str(crf), "preset": preset, **_x264_options()}
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
