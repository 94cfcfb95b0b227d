"""write_mp4: the same frames give the same bitstream, whatever ran before in the process."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from conftest import solid_frames
from vidbench.media.encode import write_mp4


def _leave_bytes_behind(value: int) -> None:
    """Free heap blocks full of `value`: what x264 may next be given uninitialised."""
    blocks = [np.full(size, value, np.uint8) for size in (65536, 131072, 262144, 524288) * 4]
    del blocks


def test_the_same_frames_give_the_same_bitstream_after_other_work(tmp_path: Path) -> None:
    """Two objects' views encoded from the same frames in one test session got other bitstreams
    (a frame's pixels a step apart: a 19th thumbnail in the report) once earlier tests had left
    their bytes in freed memory: x264's AVX-512 macroblock-tree code reads past a row of a frame
    whose width is no multiple of 128 pixels (the module's docstring)."""
    frames = solid_frames(12, size=32, seed=9)
    write_mp4(tmp_path / "first.mp4", frames)
    first = (tmp_path / "first.mp4").read_bytes()
    for k in range(4):
        with av.open(str(tmp_path / "first.mp4")) as container:  # as the report's tests did
            for frame in container.decode(video=0):
                frame.to_ndarray(format="rgb24")
        _leave_bytes_behind(0xFF)  # int16 -1: motion vectors that point back into the frame
        write_mp4(tmp_path / f"{k}.mp4", frames)
        assert (tmp_path / f"{k}.mp4").read_bytes() == first, f"encode {k + 2}"
