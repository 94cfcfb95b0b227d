"""The bootstrap of a mean (scoring/stats.py): data with few distinct values has its resamples
drawn as counts of each value; that must give the distribution that resampling indices gives."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from vidbench.scoring import stats


@pytest.mark.parametrize(
    "data",
    [
        (np.random.default_rng(3).random(300) < 0.7).astype(float),  # a right/wrong column
        np.random.default_rng(4).integers(0, 6, 150).astype(float),  # 0-5 judge scores
        np.array([-1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]),  # paired differences, tiny
    ],
    ids=["right-wrong", "scores-0-5", "differences"],
)
def test_counts_of_each_value_resample_like_indices(
    data: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_counts = stats.resampled_means(data, 20_000, seed=1)
    monkeypatch.setattr(stats, "FEW_LEVELS", 0)  # every data set through the indices
    by_indices = stats.resampled_means(data, 20_000, seed=2)
    assert by_counts.shape == by_indices.shape == (20_000,)
    assert not np.array_equal(by_counts, by_indices)  # two ways of drawing, really
    assert ks_2samp(by_counts, by_indices).pvalue > 1e-3  # one distribution
    assert np.percentile(by_counts, [2.5, 97.5]) == pytest.approx(
        np.percentile(by_indices, [2.5, 97.5]), abs=0.02 * max(1.0, float(np.ptp(data)))
    )
    # the spread a mean of n values has: sd / sqrt(n)
    assert by_counts.std() == pytest.approx(data.std() / np.sqrt(len(data)), rel=0.05)


def test_a_large_right_wrong_column_is_cheap_and_centred() -> None:
    data = (np.random.default_rng(5).random(100_000) < 0.63).astype(float)
    low, high = stats.bootstrap_ci(data, seed=0) or (0.0, 0.0)
    share = 100 * data.mean()
    assert low < share < high and high - low == pytest.approx(2 * 1.96 * 0.1527, rel=0.1)


def test_many_distinct_values_keep_the_index_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    data = np.random.default_rng(6).random(40)  # 40 distinct values (FEW_LEVELS is 64)
    monkeypatch.setattr(stats, "FEW_LEVELS", 10)
    rng = np.random.default_rng(9)
    at_once = data[rng.integers(0, 40, size=(30, 40))].mean(axis=1)
    assert np.array_equal(stats.resampled_means(data, 30, seed=9), at_once)
