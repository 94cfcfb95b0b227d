"""Agreement of a binary judge with human verdicts: rate, bootstrap interval, confusion matrix,
Cohen's kappa (the statistics of AutoEval-Video paper Table 3, for any yes/no judge)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from vidbench.scoring.stats import bootstrap_ci, mean_percent


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def cohen_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    n = len(pairs)
    if not n:
        return None
    observed = sum(1 for human, judge in pairs if human == judge) / n
    human_yes = sum(h for h, _ in pairs) / n
    judge_yes = sum(j for _, j in pairs) / n
    chance = human_yes * judge_yes + (1 - human_yes) * (1 - judge_yes)
    return None if chance == 1 else (observed - chance) / (1 - chance)


class Agreement(TypedDict):
    """How often a judge agrees with people: n pairs, percent (None: no pairs), its 95% interval,
    the confusion matrix ("human=1" -> "judge=0" -> n) and Cohen's kappa."""

    n: int
    agreement: float | None
    ci95: list[float] | None
    confusion: dict[str, dict[str, int]]
    kappa: float | None


def binary_agreement(pairs: Sequence[tuple[int, int]], seed: int = 0) -> Agreement:
    """(human, judge) verdict pairs, 1 = correct -> agreement in percent with its 95% bootstrap
    interval, the confusion matrix (rows: human, columns: judge) and Cohen's kappa."""
    agree = [float(human == judge) for human, judge in pairs]
    interval = bootstrap_ci(agree, seed=seed)
    confusion = {
        f"human={h}": {f"judge={j}": sum(1 for p in pairs if p == (h, j)) for j in (1, 0)}
        for h in (1, 0)
    }
    kappa = cohen_kappa(pairs)
    return {
        "n": len(pairs),
        "agreement": _round(mean_percent(agree)),
        "ci95": None if interval is None else [round(interval[0], 2), round(interval[1], 2)],
        "confusion": confusion,
        "kappa": None if kappa is None else round(kappa, 4),
    }
