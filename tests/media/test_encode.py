"""write_mp4: the same frames give the same bitstream whatever ran before; bad frame rates named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

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


@pytest.mark.parametrize("fps", [0, -1, 29.97, True])
def test_a_frame_rate_that_is_no_whole_number_is_refused_naming_the_file(
    tmp_path: Path, fps: Any
) -> None:
    """fps=0 wrote a 24 fps video without a word; -1 and 29.97 raised PyAV's errors (an
    AttributeError for the float) without the file's name."""
    path = tmp_path / "clip.mp4"
    with pytest.raises(ValueError, match=re.escape(f"{path}: fps must be a whole number")):
        write_mp4(path, solid_frames(2), fps=fps)
    assert not path.exists()
