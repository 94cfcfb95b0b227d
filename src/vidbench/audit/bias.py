"""Benchmark-level position bias: are the gold letters spread evenly over the positions, and
does each model pick letters the way the golds fall (chi-square tests, scipy)?"""

from __future__ import annotations

from collections import Counter

import numpy as np
from scipy.stats import chi2_contingency, chisquare

from vidbench.audit.responses import Responses

BIAS_P = 0.01  # a p-value below this is reported as a bias


def _shares(counts: Counter[str], letters: list[str]) -> dict[str, float]:
    total = sum(counts.values()) or 1
    return {c: round(counts[c] / total, 4) for c in letters}


def gold_bias(responses: Responses) -> dict[str, object] | None:
    """Gold letters against an even spread over each item's options."""
    items = [it for it in responses.items if it.choices and it.gold in it.choices]
    if not items:
        return None
    letters = sorted({c for it in items for c in it.choices})
    counts = Counter(it.gold for it in items)
    expected = [sum(1 / len(it.choices) for it in items if c in it.choices) for c in letters]
    p = float(chisquare([counts[c] for c in letters], expected).pvalue)
    return {
        "n": len(items),
        "shares": _shares(counts, letters),
        "even": {c: round(e / len(items), 4) for c, e in zip(letters, expected, strict=True)},
        "p_value": p,
        "biased": p < BIAS_P,
    }


def model_bias(responses: Responses) -> list[dict[str, object]]:
    """Per run, its letters against the gold letters of the same items (a 2 x letters
    contingency table): a model that favours a position picks it more often than golds fall
    there."""
    found = []
    items = [it for it in responses.items if it.choices and it.gold in it.choices]
    letters = sorted({c for it in items for c in it.choices})
    for run in responses.runs:
        picked = [(a, it.gold) for it in items if (a := responses.answer(run, it)) is not None]
        if not picked:
            continue
        chosen = Counter(a for a, _ in picked)
        golds = Counter(g for _, g in picked)
        table = np.array([[chosen[c] for c in letters], [golds[c] for c in letters]])
        table = table[:, table.sum(axis=0) > 0]
        p = float(chi2_contingency(table).pvalue) if table.shape[1] > 1 else 1.0
        shares, gold_shares = _shares(chosen, letters), _shares(golds, letters)
        favoured = max(letters, key=lambda c: shares[c] - gold_shares[c])
        found.append(
            {
                "model": run.label,
                "n": len(picked),
                "shares": shares,
                "gold_shares": gold_shares,
                "favoured": favoured,
                "p_value": p,
                "biased": p < BIAS_P,
            }
        )
    return found
