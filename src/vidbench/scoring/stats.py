"""Statistics over per-sample scores: a column's mean and its percentile-bootstrap interval, and
paired tests of two runs on the same samples (exact McNemar for right/wrong columns, a paired
bootstrap for scores such as caption metrics and judge scores)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def mean_percent(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) * 100 if len(values) else None


def bootstrap_ci(
    values: Sequence[float], n_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, in percent (None for no values)."""
    if not len(values):
        return None
    means = resampled_means(np.asarray(values, dtype=float), n_resamples, seed)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low) * 100, float(high) * 100


@dataclass(frozen=True)
class PairedResult:
    n: int  # samples answered in both runs
    mean_a: float
    mean_b: float
    difference: float  # mean_b - mean_a
    ci95: tuple[float, float]  # of the difference, paired bootstrap
    p_value: float
    test: str  # "mcnemar-exact" | "paired-bootstrap"
    discordant: tuple[int, int] | None = None  # (a right b wrong, a wrong b right) for McNemar


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of the discordant pairs at 1/2."""
    from scipy.stats import binomtest

    n = a_only + b_only
    return 1.0 if n == 0 else float(binomtest(a_only, n, 0.5).pvalue)


# Resampled indices drawn at a time: the means of a large set's resamples are computed a block
# of resamples at a time, so the bootstrap's memory stays bounded (n_resamples x n indices at
# once would be 1.6 GB for 100,000 values; a block is 4 MB of them).
RESAMPLE_BLOCK = 1 << 19


# Data with at most this many distinct values (right/wrong columns, 0-5 judge scores, paired
# differences of them) has its resamples drawn as counts of each value, not as indices.
FEW_LEVELS = 64


def resampled_means(data: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The means of `n_resamples` resamples (with replacement) of `data`.

    Data with few distinct values: a resample is, in distribution, a draw of how many times each
    value comes up (multinomial, with each value's share of the data as its chance), so the
    means are drawn that way: 2,000 resamples of a 100,000-sample right/wrong column cost two
    multinomial draws apiece instead of 200 million indices (numpy and scipy have no bootstrap
    of the mean that does this). Other data: the same numbers as drawing every resample's
    indices at once with `default_rng(seed)` (the generator's stream does not depend on how its
    draws are split), a block of resamples at a time."""
    rng = np.random.default_rng(seed)
    n = len(data)
    levels, counts = np.unique(data, return_counts=True)
    if 0 < len(levels) <= FEW_LEVELS:
        drawn = rng.multinomial(n, counts / n, size=n_resamples)
        return np.asarray(drawn @ levels / n, dtype=float)
    rows = max(1, RESAMPLE_BLOCK // n)
    blocks = [
        data[rng.integers(0, n, size=(min(rows, n_resamples - start), n))].mean(axis=1)
        for start in range(0, n_resamples, rows)
    ]
    return np.concatenate(blocks) if blocks else np.empty(0)


def paired(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 10_000, seed: int = 0
) -> PairedResult:
    """Compare two runs' per-sample values of one column (aligned: same sample at the same
    index). Values all 0/1 get the exact McNemar test; others a paired bootstrap, whose two-sided
    p-value is the share of resampled mean differences, shifted to be centred on zero, at least
    as far from zero as the observed difference. The interval is the bootstrap's percentiles."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or not len(x):
        raise ValueError("paired: two non-empty sequences of the same length")
    diffs = y - x
    means = resampled_means(diffs, n_resamples, seed)
    ci = (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))
    binary = bool(np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all())
    if binary:
        a_only = int(((x == 1) & (y == 0)).sum())
        b_only = int(((x == 0) & (y == 1)).sum())
        p, test, discordant = mcnemar_exact(a_only, b_only), "mcnemar-exact", (a_only, b_only)
    else:
        observed = float(diffs.mean())
        centred = means - observed  # the difference's spread around zero under no difference
        p = float(min(1.0, (np.abs(centred) >= abs(observed)).mean()))
        test, discordant = "paired-bootstrap", None
    return PairedResult(
        len(x), float(x.mean()), float(y.mean()), float(diffs.mean()), ci, p, test, discordant
    )
