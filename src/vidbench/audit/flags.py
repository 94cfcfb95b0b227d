"""Item flags from the response table: `gold`, `blind`, `chance`, `easy`, `negative` (the
near-duplicate flag is in duplicates.py). Each is a `Flag` with a score in [0, 1] (how sure, or
how strong), one line saying why, and for `gold` the option suggested instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, gammaln, logsumexp
from scipy.stats import binom, mannwhitneyu, norm

from vidbench.audit.responses import Responses

GOLD_FLAG = 0.3  # posterior that the gold is wrong from which it is flagged: a review queue
# would rather show a few right golds than miss a wrong one (chosen on bench/audit_recovery.py's
# seeds 0-2; docs/audit.md has the precision and recall at 0.2, 0.3 and 0.5)
BLIND_TAIL = 0.1  # a blind share this likely by guessing or less is "well beyond chance"
# (two blind runs both right on four options: 1/16, 4D-Bench's blind filter; one: 1/4, never)
NEGATIVE_P = 0.05  # one-sided Mann-Whitney: right answers from weaker models
EM_ROUNDS = 8
DIFFICULTY_GRID = np.linspace(-4.0, 4.0, 33)  # an item's difficulty, in log-odds
DIFFICULTY_STEP = DIFFICULTY_GRID[1] - DIFFICULTY_GRID[0]
DIFFICULTY_PRIOR = norm.logpdf(DIFFICULTY_GRID, 0.0, 1.5) + np.log(DIFFICULTY_STEP)
SLOPE_GRID = np.array([0.5, 1.0, 2.0, 3.0])  # how strongly skill tells right from wrong
GRID_PRIOR = np.tile(DIFFICULTY_PRIOR - np.log(len(SLOPE_GRID)), len(SLOPE_GRID))


@dataclass(frozen=True)
class Flag:
    kind: str
    score: float
    reason: str
    suggested: str | None = None
    reviewed: bool = False  # people saw this flag and kept the item (Task.reviewed)

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "score": round(self.score, 4),
            "reason": self.reason,
            "suggested": self.suggested,
            "reviewed": self.reviewed,
        }


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _loglik(letters: np.ndarray, skill: np.ndarray, k: int) -> np.ndarray:
    """log P(the models' letters | option c is right) for items with `k` options: `letters`
    items x models (option index, -1 none), `skill` the models' log-odds of knowing an average
    item; items x k. A model knows the item with log-odds slope * skill - difficulty, and
    guesses among the k options when it does not; the item's slope and difficulty are
    integrated out over SLOPE_GRID x DIFFICULTY_GRID; the wrong picks are Dirichlet-multinomial
    (alpha 1), so models that share an attractive distractor are not taken for independent
    evidence (counted by how much each model knows: a guesser's picks are spread evenly)."""
    answered = letters >= 0
    logit = skill[:, None] * SLOPE_GRID[None, :]  # models x slopes
    know = expit(logit[:, :, None] - DIFFICULTY_GRID[None, None, :]).reshape(1, len(skill), -1)
    p = 1 / k + (1 - 1 / k) * know  # a model that does not know guesses
    # A wrong pick follows the distractors only as far as the model knows something: a
    # guesser's picks are spread evenly (weight 1 - w), so chance-level runs say nothing.
    weight = expit(skill)[None, :] * answered
    counts = np.stack([(weight * (letters == c)).sum(axis=1) for c in range(k)], axis=1)
    spread = np.stack([((1 - weight) * (letters == c)).sum(axis=1) for c in range(k)], axis=1)
    n = counts.sum(axis=1)
    found = np.empty((len(letters), k))
    for c in range(k):
        hits = (letters == c)[:, :, None]
        per_model = np.where(hits, np.log(p), np.log1p(-p)) * answered[:, :, None]
        right = logsumexp(per_model.sum(axis=1) + GRID_PRIOR[None, :], axis=1)
        wrong = n - counts[:, c]
        others = gammaln(1 + counts).sum(axis=1) - gammaln(1 + counts[:, c])
        evenly = (spread.sum(axis=1) - spread[:, c]) * np.log(1 / (k - 1))
        found[:, c] = right + gammaln(k - 1) - gammaln(k - 1 + wrong) + others + evenly
    return found


def gold_posteriors(responses: Responses) -> list[dict[str, float]]:
    """Per item, the posterior of each option being the right one, given the gold and every
    seeing model's letter ({} for items without options or gold).

    The model (see _loglik): a model knows an item by its skill and the item's slope and
    difficulty (a 2PL with guessing, the item's parameters integrated out), and a wrong pick
    follows the item's own distractor weights; the gold is right with prior 1 - eps. Each
    model's skill (from its accuracy above guessing) and eps are fitted by EM over all items
    (Dawid and Skene's scheme, with item parameters as in Whitehill et al.'s GLAD), so the
    models strong on the rest count most. Written here (about 50 lines) because cleanlab's
    multi-annotator scores need a classifier's probabilities for every item, which an audit of
    runs does not have; measured in docs/audit.md.
    """
    runs = responses.seeing
    table: list[dict[str, float]] = [{} for _ in responses.items]
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, item in enumerate(responses.items):
        if item.choices and item.gold in item.choices and runs:
            groups.setdefault(item.choices, []).append(i)
    if not groups:
        return table
    letters, gold, posterior = {}, {}, {}
    for choices, members in groups.items():
        index = {c: n for n, c in enumerate(choices)}
        picks = [[responses.answer(responses.runs[r], responses.items[i]) for r in runs]
                 for i in members]  # fmt: skip
        letters[choices] = np.array([[index.get(a or "", -1) for a in row] for row in picks])
        gold[choices] = np.array([index[responses.items[i].gold or ""] for i in members])
        posterior[choices] = np.eye(len(choices))[gold[choices]]
    eps = 0.05
    for _ in range(EM_ROUNDS):
        hits = np.zeros(len(runs))
        given = np.zeros(len(runs))
        for choices in groups:  # each model's accuracy against the current posterior labels
            picked = letters[choices]
            chosen = np.take_along_axis(posterior[choices], np.maximum(picked, 0), axis=1)
            hits += np.where(picked >= 0, chosen, 0).sum(axis=0)
            given += (picked >= 0).sum(axis=0)
        accuracy = (hits + 1) / (given + 2)  # Laplace: never exactly 0 or 1
        for choices in groups:
            k = len(choices)
            knows = np.clip((accuracy - 1 / k) / (1 - 1 / k), 0.01, 0.99)  # above guessing
            skill = np.log(knows / (1 - knows))
            prior = np.full((len(gold[choices]), k), np.log(eps / (k - 1)))
            prior[np.arange(len(prior)), gold[choices]] = np.log(1 - eps)
            logp = prior + _loglik(letters[choices], skill, k)
            posterior[choices] = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        right = np.concatenate(
            [np.take_along_axis(posterior[c], gold[c][:, None], axis=1).ravel() for c in groups]
        )
        eps = float(np.clip(1 - right.mean(), 0.001, 0.5))
    for choices, members in groups.items():
        for row, i in enumerate(members):
            table[i] = {c: float(v) for c, v in zip(choices, posterior[choices][row], strict=True)}
    return table


def gold_flag(item_gold: str, posterior: dict[str, float], answered: list[str]) -> Flag | None:
    """`answered`: the letters the seeing models chose on the item."""
    if not posterior:
        return None
    wrong = 1 - posterior[item_gold]
    if wrong < GOLD_FLAG:
        return None
    suggested = max((c for c in posterior if c != item_gold), key=posterior.__getitem__)
    reason = (
        f"the models strong on the rest favour {suggested} over the gold {item_gold} "
        f"({answered.count(suggested)} of {len(answered)} chose {suggested}, "
        f"{answered.count(item_gold)} the gold {item_gold}; P(gold wrong) = {wrong:.2f})"
    )
    return Flag("gold", wrong, reason, suggested)


def blind_tail(right: int, n: int, chance: float) -> float:
    """The chance of `right` or more of `n` blind runs being right by guessing."""
    return float(binom.sf(right - 1, n, chance)) if chance > 0 else (0.0 if right else 1.0)


def blind_by_chance(n: int, chance: float) -> float:
    """The chance that an item a blind run cannot answer is flagged anyway (lucky guesses of
    `n` blind runs)."""
    return sum(
        float(binom.pmf(c, n, chance))
        for c in range(1, n + 1)
        if c / n >= 0.5 and blind_tail(c, n, chance) <= BLIND_TAIL
    )


def blind_flag(right: np.ndarray, chance: float) -> Flag | None:
    """`right`: the blind runs' 1/0 on the item (NaN dropped before)."""
    n = len(right)
    if n == 0:
        return None
    c = int(right.sum())
    tail = blind_tail(c, n, chance)
    if c / n < 0.5 or tail > BLIND_TAIL:
        return None
    reason = f"{c} of {n} blind run(s) right without the video (chance {_pct(chance)})"
    return Flag("blind", c / n, reason)


def chance_flag(right: np.ndarray, chance: float) -> Flag | None:
    n = len(right)
    if n < 2:
        return None
    share = float(right.mean())
    if share > chance:
        return None
    reason = f"{int(right.sum())} of {n} models right: no better than chance ({_pct(chance)})"
    return Flag("chance", 1 - share, reason)


def easy_flag(right: np.ndarray) -> Flag | None:
    n = len(right)
    if n < 2 or right.min() < 1:
        return None
    return Flag("easy", 1.0, f"all {n} models right: it tells none of them apart")


def negative_flag(right: np.ndarray, ability: np.ndarray) -> Flag | None:
    """Right answers from weaker models: a one-sided Mann-Whitney test of the abilities of the
    models right against those of the models wrong (mirt's 2PL keeps slopes above 0, so the
    fitted discrimination cannot say it)."""
    strong, weak = ability[right == 1], ability[right == 0]
    if len(strong) == 0 or len(weak) == 0:
        return None
    p = float(mannwhitneyu(strong, weak, alternative="less").pvalue)
    if p >= NEGATIVE_P:
        return None
    reason = (
        f"the {len(strong)} model(s) right are weaker than the {len(weak)} wrong "
        f"(Mann-Whitney p = {p:.3f})"
    )
    return Flag("negative", 1 - p, reason)
