"""Statistics over per-sample scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mean_percent(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) * 100 if len(values) else None


def bootstrap_ci(
    values: Sequence[float], n_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, in percent (None for no values)."""
    if not len(values):
        return None
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(n_resamples, len(data)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low) * 100, float(high) * 100
