"""Where an object moves: pixel change between consecutive frames (4D-Bench paper, section 3.2
"Object motion analysis" and supplement B.1: the start and end of motion in a single view's
video). The one place this logic lives; `curate 4d render` and `curate 4d motion` both use it.

A pixel changes between two frames when any of its channels differs by more than ``tolerance``
(out of 255; it absorbs video compression noise). A step moves when more than ``threshold`` of
its pixels change. The motion range runs from the frame before the first moving step to the frame
after the last one, so the trimmed video shows the still pose before and after the motion; an
object whose range is shorter than ``min_length`` frames counts as static.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vidbench.core.errors import ConfigError
from vidbench.media.decode import decode_frames, probe


@dataclass(frozen=True)
class MotionSettings:
    """Thresholds of the pixel-change detector."""

    threshold: float = 0.002  # fraction of pixels that must change for a step to move
    tolerance: int = 12  # per-channel difference (0-255) below which a pixel is unchanged
    min_length: int = 2  # frames, from the still frame before the motion to the one after

    def __post_init__(self) -> None:
        if not 0 <= self.threshold < 1:
            raise ConfigError(f"motion threshold must be in [0, 1), got {self.threshold}")
        if not 0 <= self.tolerance < 255:
            raise ConfigError(f"motion tolerance must be in [0, 255), got {self.tolerance}")
        if self.min_length < 2:
            raise ConfigError(
                f"minimum motion length must be 2 frames or more, got {self.min_length}"
            )


@dataclass(frozen=True)
class Motion:
    """Pixel change of every step (``changes[i]``: frame i to i + 1) and the motion range found
    (``start``..``end``, frame indices, both included; None when the object is static)."""

    changes: tuple[float, ...]
    start: int | None
    end: int | None

    @property
    def moving(self) -> bool:
        return self.start is not None

    @property
    def score(self) -> float:
        """The largest fraction of pixels changed in one step."""
        return max(self.changes, default=0.0)

    def to_json(self) -> dict:
        return {
            "moving": self.moving,
            "start": self.start,
            "end": self.end,
            "score": round(self.score, 6),
            "changes": [round(c, 6) for c in self.changes],
        }


def change_fractions(frames: Iterable[np.ndarray], tolerance: int) -> list[float]:
    """Fraction of pixels that change between each pair of consecutive frames (HxWx3 uint8)."""
    changes: list[float] = []
    previous: np.ndarray | None = None
    for frame in frames:
        current = np.asarray(frame, dtype=np.int16)
        if previous is not None:
            if current.shape != previous.shape:
                raise ValueError(f"frame {len(changes) + 1} has shape {current.shape}")
            changed = (np.abs(current - previous) > tolerance).any(axis=-1)
            changes.append(float(changed.mean()))
        previous = current
    return changes


def find_motion(changes: Iterable[float], settings: MotionSettings) -> Motion:
    """The motion range of a video whose consecutive frames changed by ``changes``."""
    changes = tuple(changes)
    moving = [i for i, c in enumerate(changes) if c > settings.threshold]
    if not moving or moving[-1] + 2 - moving[0] < settings.min_length:
        return Motion(changes, None, None)
    return Motion(changes, moving[0], moving[-1] + 1)


def detect(frames: Iterable[np.ndarray], settings: MotionSettings) -> Motion:
    """Motion range of a sequence of frames."""
    return find_motion(change_fractions(frames, settings.tolerance), settings)


def video_motion(path: Path, settings: MotionSettings, max_side: int | None = 256) -> Motion:
    """Motion range of a video file (decoded with PyAV, downscaled to ``max_side`` pixels);
    MediaError when it is missing or unreadable."""
    info = probe(Path(path))
    frames = decode_frames(Path(path), info, range(info.frame_count), max_side=max_side)
    return detect((frames[i] for i in range(info.frame_count)), settings)
