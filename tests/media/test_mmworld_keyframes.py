"""The keyframe sampler: one frame per shot, uniform on a static video, cached, in FrameSpec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mmworld_support import shot_frames
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.records import MediaRef
from vidbench.media import keyframes
from vidbench.media.cache import FrameCache
from vidbench.media.decode import probe
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four static shots of 30, 10, 10 and 10 frames."""
    path = tmp_path_factory.mktemp("kf") / "shots.mp4"
    write_mp4(path, shot_frames((30, 10, 10, 10), seed=3))
    return path


def _keyframes(path: Path, n: int, cache: FrameCache | None = None) -> list[int]:
    spec = FrameSpec(views=(0,), frames=n, sampler="keyframes")
    return [f.index for f in load_frames(MediaRef.single(path), spec, cache)]


def test_one_keyframe_per_shot_where_uniform_sampling_misses_one(shots: Path) -> None:
    picks = _keyframes(shots, 4)
    assert [np.searchsorted([30, 40, 50, 60], p, side="right") for p in picks] == [0, 1, 2, 3]
    assert picks == sorted(set(picks))
    uniform = FrameSpec(views=(0,), frames=4, sampler="linspace")
    lin = [f.index for f in load_frames(MediaRef.single(shots), uniform)]
    assert lin == [0, 19, 39, 59]  # two from the first shot, none from the third


def test_static_video_falls_back_to_even_segments(tmp_path: Path) -> None:
    path = tmp_path / "static.mp4"
    write_mp4(path, shot_frames((50,)))
    picks = _keyframes(path, 5)
    assert picks == sorted(picks) and len(set(picks)) == 5
    assert all(abs(p - c) <= 1 for p, c in zip(picks, (5, 15, 25, 35, 45), strict=True))


def test_segmentation_is_optimal_on_small_cases() -> None:
    x = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [5.0]])
    assert keyframes.segment(x, 3) == [(0, 2), (2, 5), (5, 6)]
    assert keyframes.medoids(x, [(0, 2), (2, 5), (5, 6)]) == [0, 2, 5]
    with pytest.raises(ValueError):
        keyframes.segment(x, 7)


def test_picks_are_cached_once_per_video(
    shots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = FrameCache(tmp_path / "cache")
    first = _keyframes(shots, 4, cache)
    assert list((tmp_path / "cache" / "keyframes").rglob("*.json"))
    monkeypatch.setattr(keyframes, "select", lambda *a: pytest.fail("analysed twice"))
    assert _keyframes(shots, 4, cache) == first


def test_too_few_frames_and_spec_validation(shots: Path) -> None:
    info = probe(shots)
    with pytest.raises(MediaError, match="fewer than the 100"):
        keyframes.select(shots, info, list(range(info.frame_count)), 100)
    with pytest.raises(ConfigError, match="interval, linspace, keyframes"):
        FrameSpec(sampler="scenes")  # type: ignore[arg-type]
