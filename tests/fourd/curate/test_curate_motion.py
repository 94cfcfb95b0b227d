"""Pixel-change motion detection and the `curate 4d motion` filter on generated videos."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vidbench.benchmarks.fourd.curate.motion import MotionSettings, detect, find_motion
from vidbench.benchmarks.fourd.curate.motion_filter import filter_motion
from vidbench.core.errors import ConfigError
from vidbench.media.encode import write_mp4
from vidbench.report.funnel import Funnel


def _moving_square(frames: int, start: int, end: int, size: int = 64) -> list[np.ndarray]:
    """A black square that slides right between frames ``start`` and ``end`` (one step each)."""
    out = []
    for f in range(frames):
        x = 8 + 3 * (min(max(f, start), end) - start)
        img = np.full((size, size, 3), 255, np.uint8)
        img[20:40, x : x + 16] = 0
        out.append(img)
    return out


def test_motion_range_of_frames_is_exact() -> None:
    motion = detect(_moving_square(20, 6, 13), MotionSettings())
    assert (motion.start, motion.end) == (6, 13)
    assert motion.changes[5] == 0 and motion.changes[6] > 0 and motion.changes[13] == 0


def test_threshold_and_min_length() -> None:
    changes = [0.0, 0.01, 0.0005, 0.0, 0.0]
    assert (
        find_motion(changes, MotionSettings()).start,
        find_motion(changes, MotionSettings()).end,
    ) == (1, 2)
    assert not find_motion(changes, MotionSettings(threshold=0.02)).moving
    assert not find_motion(changes, MotionSettings(min_length=3)).moving
    with pytest.raises(ConfigError):
        MotionSettings(min_length=1)


def test_motion_filter_finds_known_ranges_in_videos(tmp_path) -> None:
    videos = tmp_path / "videos"
    for uid, (start, end) in {"a": (4, 15), "b": (10, 12)}.items():
        write_mp4(videos / uid / "view_0_rgb_white_bg.mp4", _moving_square(24, start, end))
    write_mp4(videos / "still" / "view_0_rgb_white_bg.mp4", _moving_square(24, 0, 0))
    (videos / "broken").mkdir()
    (videos / "broken" / "view_0_rgb_white_bg.mp4").write_bytes(b"not a video")
    write_mp4(videos / "no-view-0" / "view_1_rgb_white_bg.mp4", _moving_square(24, 4, 15))
    (videos / "no-videos").mkdir()  # nothing of an object: not one
    kept, dropped = filter_motion(videos, tmp_path / "out", MotionSettings(), progress=False)
    ranges = {r.uid: (r.start, r.end) for r in kept}
    assert abs(ranges["a"][0] - 4) <= 1 and abs(ranges["a"][1] - 15) <= 1
    assert abs(ranges["b"][0] - 10) <= 1 and abs(ranges["b"][1] - 12) <= 1
    reasons = {p.uid: p.reason for p in dropped}
    assert reasons == {
        "still": "no motion", "broken": "unreadable video", "no-view-0": "missing view"
    }  # fmt: skip
    assert "broken" in next(p.file for p in dropped if p.uid == "broken")
    stage = Funnel.read(tmp_path / "out").stages["motion"]
    assert (stage.entered, stage.kept) == (5, 2)
    assert stage.dropped == {"no motion": 1, "unreadable video": 1, "missing view": 1}
    lines = (tmp_path / "out" / "motion.jsonl").read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0])["uid"] == "a"
