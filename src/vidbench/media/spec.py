"""FrameSpec: everything that decides which frames a model sees, in one frozen, hashable record."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from vidbench.core.errors import ConfigError

Sampler = Literal["interval", "linspace"]
Order = Literal["view-first", "time-first"]
ImageFormat = Literal["jpeg", "png"]

OFFICIAL_4D_VIEWS: tuple[int, ...] = (1, 8, 16)
VIEWS_PER_4D_OBJECT = 24


def views_evenly(k: int, total: int = VIEWS_PER_4D_OBJECT) -> tuple[int, ...]:
    """K view ids spread evenly around a ring of `total` cameras, starting at view 0."""
    if not 1 <= k <= total:
        raise ConfigError(f"views: asked for {k} views of {total}; choose 1..{total}")
    return tuple((i * total) // k for i in range(k))


def parse_views(text: str) -> tuple[int, ...]:
    """`--views` syntax: a count K ("3": spread evenly) or explicit ids ("1,8,16")."""
    text = text.strip()
    if "," in text:
        try:
            return tuple(int(v) for v in text.split(",") if v.strip())
        except ValueError as e:
            raise ConfigError(f"--views {text!r}: expected ids like 1,8,16 or a count") from e
    if not text.isdigit():
        raise ConfigError(f"--views {text!r}: expected ids like 1,8,16 or a count")
    return views_evenly(int(text))


@dataclass(frozen=True)
class FrameSpec:
    """Which frames, in which order, at which size.

    views: view ids of a multi-view video (a plain video has the single view 0).
    frames: frames sampled per view.
    sampler: `interval` = [i * (total // N) for i in range(N)] (frame 0, never the last);
        `linspace` = np.linspace(0, total - 1, N).astype(int) (both ends).
    order: `view-first` (all frames of the first view, then the next view) or `time-first`
        (at each time step, one frame of every view).
    timestamps: the prompt labels every image with its view and time.
    max_side: resize so the longer side is at most this many pixels (None: original size).
    image_format / jpeg_quality: how frames are encoded for the model.
    """

    views: tuple[int, ...] = OFFICIAL_4D_VIEWS
    frames: int = 6
    sampler: Sampler = "interval"
    order: Order = "view-first"
    timestamps: bool = False
    max_side: int | None = None
    image_format: ImageFormat = "jpeg"
    jpeg_quality: int = 95

    def __post_init__(self) -> None:
        if not self.views:
            raise ConfigError("FrameSpec: at least one view is needed")
        if len(set(self.views)) != len(self.views):
            raise ConfigError(f"FrameSpec: repeated view ids {self.views}")
        if self.frames < 1:
            raise ConfigError(f"FrameSpec: frames per view must be >= 1, got {self.frames}")
        if self.sampler not in ("interval", "linspace"):
            raise ConfigError(f"FrameSpec: unknown sampler {self.sampler!r} (interval, linspace)")
        if self.order not in ("view-first", "time-first"):
            raise ConfigError(f"FrameSpec: unknown order {self.order!r} (view-first, time-first)")
        if self.max_side is not None and self.max_side < 8:
            raise ConfigError(f"FrameSpec: max_side {self.max_side} is too small")
        if self.image_format not in ("jpeg", "png"):
            raise ConfigError(f"FrameSpec: unknown image format {self.image_format!r}")

    @property
    def n_images(self) -> int:
        return len(self.views) * self.frames

    def with_(self, **changes: Any) -> FrameSpec:
        """A copy with some fields changed (None values mean: keep)."""
        valid = {f.name for f in fields(self)}
        unknown = set(changes) - valid
        if unknown:
            raise ConfigError(f"FrameSpec: unknown fields {sorted(unknown)}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["views"] = list(self.views)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FrameSpec:
        return cls(**{**d, "views": tuple(d["views"])})

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:16]
