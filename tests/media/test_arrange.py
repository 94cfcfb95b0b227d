"""Shuffled frames and grid images: sizes, placement (pixels) and padding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vidbench.core.errors import ConfigError
from vidbench.core.records import MediaRef
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.media.spec import FrameSpec, parse_grid


@pytest.fixture(scope="module")
def ramp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """48 frames of 40x24 px whose grey level is 5 * frame index."""
    path = tmp_path_factory.mktemp("arrange") / "ramp.mp4"
    write_mp4(path, [np.full((24, 40, 3), 5 * t, np.uint8) for t in range(48)])
    return path


def _spec(**kw) -> FrameSpec:
    return FrameSpec(views=(0,), sampler="linspace", image_format="png", **kw)


def test_shuffle_is_seeded(ramp: Path) -> None:
    plain = load_frames(MediaRef.single(ramp), _spec(frames=8))
    shuffled = load_frames(MediaRef.single(ramp), _spec(frames=8, shuffle_seed=1))
    again = load_frames(MediaRef.single(ramp), _spec(frames=8, shuffle_seed=1))
    other = load_frames(MediaRef.single(ramp), _spec(frames=8, shuffle_seed=2))
    assert sorted(f.index for f in shuffled) == [f.index for f in plain]
    assert [f.index for f in shuffled] != [f.index for f in plain]
    assert [f.index for f in shuffled] == [f.index for f in again]
    assert [f.index for f in other] != [f.index for f in shuffled]


@pytest.mark.parametrize(
    ("grid", "frames", "size", "offset"),
    [
        ("1x8", 8, (320, 24), (0, 0)),
        ("4x4", 16, (160, 96), (0, 0)),
        ("2x4-square", 8, (160, 160), (0, 56)),
        ("4x4-square", 16, (160, 160), (0, 32)),
    ],
)
def test_grid_size_and_placement(ramp: Path, grid: str, frames: int, size, offset) -> None:
    [image] = load_frames(MediaRef.single(ramp), _spec(frames=frames, grid=grid))
    picture = np.asarray(decode_image(image.image.data)).astype(int)
    assert (picture.shape[1], picture.shape[0]) == size
    _, cols, _ = parse_grid(grid)
    indices = np.linspace(0, 47, frames, dtype=int)
    left, top = offset
    for i, index in enumerate(indices):
        r, c = divmod(i, cols)
        centre = picture[top + r * 24 + 12, left + c * 40 + 20]
        assert abs(centre[0] - 5 * index) <= 3, (grid, i, centre, index)
    if offset != (0, 0):
        assert picture[0, 0].max() == 0 and picture[-1, -1].max() == 0  # black padding
    assert image.image.label.startswith(f"grid {grid}: view 0, frame 0")


def test_grid_too_small_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="has 8 cells for 16 frames"):
        _spec(frames=16, grid="2x4")
    with pytest.raises(ConfigError, match="expected RxC"):
        _spec(frames=4, grid="2by2")
