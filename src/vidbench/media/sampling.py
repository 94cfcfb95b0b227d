"""Frame index samplers (the two the official 4D-Bench scripts use)."""

from __future__ import annotations

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
