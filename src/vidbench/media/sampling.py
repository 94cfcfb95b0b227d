"""Frame index samplers (the two the official 4D-Bench scripts use)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vidbench.core.errors import MediaError


def sample_indices(total: int, n: int, sampler: str) -> list[int]:
    """Indices of `n` frames out of `total` (0-based).

    A video with fewer than `n` frames is an error for both samplers: `interval` would return
    nothing (total // n == 0) and `linspace` would repeat frames, so neither is what was asked.
    """
    if total < n:
        raise MediaError(f"video has {total} frames, fewer than the {n} asked for")
    if sampler == "interval":
        step = total // n
        return [i * step for i in range(n)]
    if sampler == "linspace":
        return [int(i) for i in np.linspace(0, total - 1, n, dtype=int)]
    raise MediaError(f"unknown sampler {sampler!r}")


def window_indices(
    times: Sequence[float], start_s: float | None = None, end_s: float | None = None
) -> list[int]:
    """Indices of the frames (by start time) inside [start_s, end_s); all without a window."""
    if start_s is None and end_s is None:
        return list(range(len(times)))
    start = start_s or 0.0
    end = end_s if end_s is not None else float("inf")
    return [i for i, t in enumerate(times) if start <= t < end]
