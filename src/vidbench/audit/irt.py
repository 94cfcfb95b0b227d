"""Item difficulty and discrimination: a two-parameter logistic item response model fitted by
the `mirt` package (marginal maximum likelihood, EM, its compiled 2PL path).

Why mirt: measured on bench/audit_recovery.py's simulation (1,000 items; 5, 10, 20 models; this
2-core machine), against the other maintained candidates:
- mirt 1.2 (numpy, scipy and a compiled wheel): a 2PL fit in 0.2-0.4 s, recovering 90% of the
  rank correlation an oracle that knows every true ability and discrimination reaches from the
  same answers (docs/audit.md);
- girth 0.8 (last release 2021): its 2PL took 30 s for 100 items x 10 models (about 5 min
  for 1,000) and recovered difficulty worse (rank correlation 0.47 against 0.77 by share right);
- py-irt 0.7: pins pandas<3 and rich<14 (vidbench has pandas 3 and rich 15) and brings pyro;
- catsim: its estimators place examinees on items already calibrated; it fits no items;
- cleanlab's multi-annotator scores rate labels, not items (no difficulty, no discrimination);
  the gold scores here use the same idea, see flags.gold_posteriors.
With mirt's priors (Bayes modal) a 2PL fit left the compiled path and took 430 s for 5 models.

`difficulty` is minus the model's intercept: the log-odds that a model of average ability
answers wrong, in the slope-intercept form mirt fits (b = difficulty / discrimination is the
classical location; with few models b is unstable where the slope is small, and ranked true
difficulty worse: 0.56 against 0.70 at 10 models).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from vidbench.core.errors import ConfigError

MIN_MODELS = 3  # fewer seeing runs fit no model


@dataclass(frozen=True)
class ItemFit:
    difficulty: np.ndarray  # per item; NaN where no seeing run was graded on it
    discrimination: np.ndarray
    ability: np.ndarray  # per run fitted (EAP); NaN for runs left out


def fit_2pl(correct: np.ndarray, runs: list[int]) -> ItemFit | None:
    """The 2PL of `correct` (runs x items, 1/0/NaN) over the rows `runs`; None when there are
    fewer than MIN_MODELS of them."""
    n_runs, n_items = correct.shape
    if len(runs) < MIN_MODELS:
        return None
    try:
        import mirt
        from mirt.models import TwoParameterLogistic
    except ImportError as e:
        raise ConfigError(
            "audit needs the mirt package for its item response model: "
            "pip install 'vidbench[audit]'"
        ) from e
    data = correct[runs]
    seen = ~np.all(np.isnan(data), axis=0)
    difficulty = np.full(n_items, np.nan)
    discrimination = np.full(n_items, np.nan)
    ability = np.full(n_runs, np.nan)
    with warnings.catch_warnings():  # items every model got right (or wrong) sit at a bound
        warnings.simplefilter("ignore")
        fit = mirt.fit_mirt(data[:, seen], model="2PL", compute_standard_errors=False)
        scores = mirt.fscores(fit, data[:, seen])
    model = fit.model
    assert isinstance(model, TwoParameterLogistic)  # asked for by model="2PL"
    slope = np.asarray(model.discrimination, dtype=np.float64).ravel()
    location = np.asarray(model.difficulty, dtype=np.float64).ravel()
    difficulty[seen] = slope * location  # = -intercept
    discrimination[seen] = slope
    ability[runs] = np.asarray(scores.theta, dtype=np.float64).ravel()
    return ItemFit(difficulty, discrimination, ability)
