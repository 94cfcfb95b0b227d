"""FrameSpec: everything that decides which frames a model sees, in one frozen, hashable record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from pydantic import JsonValue, TypeAdapter

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json

Sampler = Literal["interval", "linspace", "keyframes"]
Order = Literal["view-first", "time-first"]
ImageFormat = Literal["jpeg", "png"]

# Multi-view videos are rendered from a ring of cameras; `--views K` spreads K over this many.
RING_VIEWS = 24


def views_evenly(k: int, total: int = RING_VIEWS) -> tuple[int, ...]:
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


def parse_grid(text: str) -> tuple[int, int, bool]:
    """ "4x4" -> (4, 4, False); "2x4-square" -> (2, 4, True)."""
    shape, _, pad = text.partition("-")
    rows, _, cols = shape.partition("x")
    if not (rows.isdigit() and cols.isdigit() and int(rows) > 0 and int(cols) > 0) or pad not in (
        "",
        "square",
    ):
        raise ConfigError(f"FrameSpec: grid {text!r}: expected RxC or RxC-square, e.g. 4x4")
    return int(rows), int(cols), pad == "square"


_OPTIONAL = ("max_side", "shuffle_seed", "grid")
# `--max-side 0`: the video's own size, overriding a task's default size.
ORIGINAL_SIZE = 0
# Longest side of a grid image: the most that API models keep (OpenAI fits images into
# 2048 x 2048); a grid's cells are made small enough that the whole grid fits.
GRID_MAX_SIDE = 2048
# Frames of real-world clips (MMWorld, AutoEval-Video: 720p and larger) are sent at most this
# large by default: about what API models keep of an image (768 px on the short side), and what
# they bill by.
CLIP_MAX_SIDE = 768


def grid_cell_side(grid: str, max_side: int | None) -> int:
    """The longest side a grid's cells may have so the grid fits in GRID_MAX_SIDE (or the
    frames' own `max_side`, when that is smaller)."""
    rows, cols, _ = parse_grid(grid)
    cell = GRID_MAX_SIDE // max(rows, cols)
    return cell if max_side is None else min(cell, max_side)


@dataclass(frozen=True)
class FrameSpec:
    """Which frames, in which order, at which size.

    views: view ids of a multi-view video (a plain video has the single view 0).
    frames: frames sampled per view.
    sampler: `interval` = [i * (total // N) for i in range(N)] (frame 0, never the last);
        `linspace` = np.linspace(0, total - 1, N).astype(int) (both ends);
        `keyframes` = N representative frames chosen by content change (media/keyframes.py).
    order: `view-first` (all frames of the first view, then the next view) or `time-first`
        (at each time step, one frame of every view).
    timestamps: the prompt labels every image with its view and time.
    max_side: resize so the longer side is at most this many pixels (None: original size).
    image_format / jpeg_quality: how frames are encoded for the model.
    shuffle_seed: shuffle the sampled frames with this seed (a temporal ablation).
    grid: tile the frames into one image, "RxC" (rows x columns, filled row by row), with
        "-square" to pad it with black to a square (for models that center-crop).
    """

    views: tuple[int, ...] = (0,)
    frames: int = 8
    sampler: Sampler = "linspace"
    order: Order = "view-first"
    timestamps: bool = False
    max_side: int | None = None
    image_format: ImageFormat = "jpeg"
    jpeg_quality: int = 95
    shuffle_seed: int | None = None
    grid: str | None = None

    def __post_init__(self) -> None:
        if not self.views:
            raise ConfigError("FrameSpec: at least one view is needed")
        if len(set(self.views)) != len(self.views):
            raise ConfigError(f"FrameSpec: repeated view ids {self.views}")
        if self.frames < 1:
            raise ConfigError(f"FrameSpec: frames per view must be >= 1, got {self.frames}")
        if self.sampler not in ("interval", "linspace", "keyframes"):
            raise ConfigError(
                f"FrameSpec: unknown sampler {self.sampler!r} (interval, linspace, keyframes)"
            )
        if self.order not in ("view-first", "time-first"):
            raise ConfigError(f"FrameSpec: unknown order {self.order!r} (view-first, time-first)")
        if self.max_side is not None and self.max_side < 8:
            raise ConfigError(f"FrameSpec: max_side {self.max_side} is too small")
        if self.image_format not in ("jpeg", "png"):
            raise ConfigError(f"FrameSpec: unknown image format {self.image_format!r}")
        if self.grid is not None:
            rows, cols, _ = parse_grid(self.grid)
            if rows * cols < self.n_frames_sampled:
                raise ConfigError(
                    f"FrameSpec: grid {self.grid} has {rows * cols} cells for "
                    f"{self.n_frames_sampled} frames"
                )

    def describe(self) -> str:
        """What the model is given, as a person reads it: "views 1, 8, 16 × 6 frames
        (interval), view by view, JPEG"."""
        views = ", ".join(str(v) for v in self.views)
        parts = [
            f"{'views' if len(self.views) > 1 else 'view'} {views} × {self.frames} frames "
            f"({self.sampler})",
            "view by view" if self.order == "view-first" else "time step by time step",
        ]
        if self.timestamps:
            parts.append("labelled with view and time")
        if self.max_side is not None:
            parts.append(f"longest side {self.max_side} px")
        if self.grid:
            parts.append(f"tiled {self.grid}")
        if self.shuffle_seed is not None:
            parts.append(f"shuffled (seed {self.shuffle_seed})")
        parts.append(self.image_format.upper())
        return ", ".join(parts)

    @property
    def n_frames_sampled(self) -> int:
        return len(self.views) * self.frames

    @property
    def n_images(self) -> int:
        """Images the model receives: one per frame, or one grid."""
        return 1 if self.grid else self.n_frames_sampled

    def with_(self, **changes: Any) -> FrameSpec:
        """A copy with some fields changed (None values mean: keep; `max_side=ORIGINAL_SIZE`
        asks for frames at the video's own size)."""
        valid = {f.name for f in fields(self)}
        unknown = set(changes) - valid
        if unknown:
            raise ConfigError(f"FrameSpec: unknown fields {sorted(unknown)}")
        kept = {k: v for k, v in changes.items() if v is not None}
        if kept.get("max_side") == ORIGINAL_SIZE:
            kept["max_side"] = None
        return replace(self, **kept)

    def as_dict(self) -> dict[str, JsonValue]:
        """Fields as plain data; optional fields left at None are omitted, so specs (and store
        keys) written before a field existed stay the same."""
        d = asdict(self)
        d["views"] = list(self.views)
        return {k: v for k, v in d.items() if not (k in _OPTIONAL and v is None)}

    @classmethod
    def from_dict(cls, d: Mapping[str, JsonValue]) -> FrameSpec:
        """A spec from `as_dict`'s fields (pydantic checks their types; ConfigError for a bad
        value, as the constructor raises)."""
        return TypeAdapter(cls).validate_python(d)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:16]


def frame_overrides(
    views: str | None = None,
    frames: int | None = None,
    sampler: str | None = None,
    order: str | None = None,
    timestamps: bool | None = None,
    max_side: int | None = None,
) -> dict[str, Json]:
    """CLI frame options -> FrameSpec field overrides (absent options are left out)."""
    chosen: dict[str, Json] = {
        "views": list(parse_views(views)) if views else None,
        "frames": frames,
        "sampler": sampler,
        "order": order,
        "timestamps": timestamps or None,
        "max_side": max_side,
    }
    return {k: v for k, v in chosen.items() if v is not None}
