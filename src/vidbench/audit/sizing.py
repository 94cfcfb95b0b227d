"""How many items a benchmark needs: the 95% interval of one model's score, and the smallest
difference between two models McNemar's test detects with 80% power, at a size and accuracy.

- Interval: Wilson's score interval (scipy.stats.binomtest(...).proportion_ci("wilson")).
- McNemar's power: Connor's (1987) normal approximation for paired proportions,
  n = (z_{1-a/2} sqrt(psi) + z_{1-b} sqrt(psi - d^2))^2 / d^2, where psi is the share of items
  on which the two models disagree (one right, one wrong) and d the difference of their
  accuracies; solved for d at n (scipy.optimize.brentq). statsmodels has McNemar's test but no
  power function for it, and this one formula is all the power computation needs.
- A benchmark not built yet has no pairs of runs to measure psi on: two models whose errors
  are independent disagree on psi = p1 (1 - p2) + p2 (1 - p1) of the items; models that share
  errors disagree on fewer, so the planned difference is on the safe (large) side.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from scipy.optimize import brentq
from scipy.stats import binomtest, norm

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Sizing:
    n: int
    accuracy: float
    ci95: tuple[float, float]  # Wilson, as shares
    discordance: float  # psi: share of items two models disagree on
    detectable: float | None  # smallest difference (share) McNemar detects with POWER

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["ci95"] = [round(v, 4) for v in self.ci95]
        for key in ("accuracy", "discordance", "detectable"):
            data[key] = None if data[key] is None else round(data[key], 4)
        return data


def wilson(n: int, accuracy: float) -> tuple[float, float]:
    k = round(accuracy * n)
    ci = binomtest(k, n).proportion_ci(confidence_level=1 - ALPHA, method="wilson")
    return float(ci.low), float(ci.high)


def mcnemar_n(difference: float, discordance: float) -> float:
    """Items needed to detect `difference` at ALPHA (two-sided) with POWER (Connor 1987)."""
    za, zb = norm.ppf(1 - ALPHA / 2), norm.ppf(POWER)
    spread = discordance - difference**2
    root = za * math.sqrt(discordance) + zb * math.sqrt(max(spread, 0.0))
    return root**2 / difference**2


def detectable_difference(n: int, discordance: float) -> float | None:
    """The smallest difference of accuracies McNemar's test detects at `n` items; None when no
    difference up to psi is (too few items)."""
    if n < 1 or discordance <= 0:
        return None
    top = discordance * (1 - 1e-9)  # d = p10 - p01 <= p10 + p01 = psi
    if mcnemar_n(top, discordance) > n:
        return None
    # mcnemar_n falls from infinity at d -> 0 to at most n at top; a fixed lower end (it was
    # 1e-6) is above the root for a large n or a small psi (ValueError from brentq)
    low = top / 2
    while mcnemar_n(low, discordance) <= n:
        low /= 2
    return float(brentq(lambda d: mcnemar_n(d, discordance) - n, low, top, xtol=low * 1e-9))


def independent_discordance(p1: float, p2: float) -> float:
    return p1 * (1 - p2) + p2 * (1 - p1)


def sizing(n: int, accuracy: float, discordance: float | None = None) -> Sizing:
    psi = independent_discordance(accuracy, accuracy) if discordance is None else discordance
    return Sizing(n, accuracy, wilson(n, accuracy), psi, detectable_difference(n, psi))
