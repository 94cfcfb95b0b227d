"""GPT-Appearance and GPT-Action (supplement Figs. VII, VIII): judge calls, reply parser, scores.

Each judgment compares the predicted caption with one human caption and returns 0..5.
Which references an object is judged against:
- "one" (protocol official): one reference per object drawn as the official scripts do,
  `random.seed(42)` then `random.randint(1, 5)` per object (for the human row, `random.choice`
  of the four captions that are not the held-out one). The official scripts walk the objects in
  directory-listing order, which no other machine reproduces; vidbench draws from one
  `random.Random(42)` stream over the uids of the reference set in sorted order, so a uid gets
  the same reference whichever predictions are scored, in `run` and in `score-captions` alike.
  Both judges use the same reference, as the two official scripts (each seeded 42) do.
- "all" (vidbench default): every reference is judged and the object's score is their mean.
The reply is read as a Python dict literal (`ast.literal_eval`, as the official scripts do);
the score key may be spelled with an underscore or a space. Official parsing reads the whole
reply; the default also accepts a dict literal inside other text (e.g. a code fence), when the
reply's dict literals do not give different scores.
A reply that does not parse is asked again (runner/model_calls.py), then counted as unscored.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial

from vidbench.benchmarks.fourd.captions import gpt_prompts as prompts
from vidbench.core.messages import Message, TextPart, user
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.model_call import CallResult, ModelCall

KINDS = ("appearance", "action")
STATUSES = ("ok", "unparsed", "error", "missing")
OFFICIAL_SEED = 42
_TEMPLATES = {
    "appearance": (prompts.APPEARANCE_SYSTEM, prompts.APPEARANCE_USER),
    "action": (prompts.ACTION_SYSTEM, prompts.ACTION_USER),
}
_PLACEHOLDER = re.compile(re.escape(prompts.HUMAN) + "|" + re.escape(prompts.PREDICTED))
_DICT = re.compile(r"\{[^{}]*\}")
# The official scripts leave every sampling setting at the API default (temperature 1).
OFFICIAL_GENERATION = GenerationConfig(temperature=1.0, top_p=1.0, max_tokens=256)
DEFAULT_GENERATION = GenerationConfig(temperature=0.0, top_p=1.0, max_tokens=256)


def prompt_version(kind: str) -> str:
    return f"4dbench-gpt-{kind}-paper-fig-v1"


def judge_messages(kind: str, human: str, predicted: str) -> tuple[Message, ...]:
    system, template = _TEMPLATES[kind]
    filled = _PLACEHOLDER.sub(
        lambda m: human if m.group(0) == prompts.HUMAN else predicted, template
    )
    return (Message("system", (TextPart(system),)), user(filled))


_NO_SCORE = object()  # a dict literal without the score key


def _dict_score(text: str, kind: str) -> object:
    """The score a dict literal gives (any value, checked by the caller), or _NO_SCORE."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_SCORE
    if not isinstance(value, dict):
        return _NO_SCORE
    for key in (f"{kind}_score", f"{kind} score"):
        if key in value:
            return value[key]
    return _NO_SCORE


def _valid(score: object) -> float | None:
    if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 5:
        return float(score)
    return None


def parse_score(reply: str, kind: str, lenient: bool = True) -> float | None:
    """The 0..5 score in a reply like "{'appearance_score': 4}", or None. Lenient: the one score
    the reply's dict literals give; dicts giving different scores are no verdict (one of them
    may be the judge quoting a caption that holds a score of its own)."""
    whole = _dict_score(reply.strip(), kind)
    if whole is not _NO_SCORE or not lenient:
        return _valid(whole)
    scores = [s for text in _DICT.findall(reply) if (s := _dict_score(text, kind)) is not _NO_SCORE]
    if not scores or any(score != scores[0] for score in scores):
        return None
    return _valid(scores[0])


def draw_references(
    uids: Iterable[str], n_refs: int = 5, held_out: Mapping[str, int] | None = None
) -> dict[str, int]:
    """1-based reference index per uid, drawn as described in the module docstring."""
    rng = random.Random(OFFICIAL_SEED)
    drawn = {}
    for uid in sorted(uids):
        if held_out is not None:
            others = [k for k in range(1, n_refs + 1) if k != held_out[uid]]
            drawn[uid] = rng.choice(others)
        else:
            drawn[uid] = rng.randint(1, n_refs)
    return drawn


@dataclass(frozen=True)
class JudgeTarget:
    """One caption to judge: `references` maps 1-based reference index -> text."""

    key: str  # unique per row and object, e.g. "<uid>" or "human:<uid>"
    caption: str
    references: Mapping[int, str]


def item_name(key: str, kind: str, index: int) -> str:
    return f"{key}:{kind}:ref{index}"


def judge_calls(
    target: JudgeTarget, lenient: bool, generation: GenerationConfig
) -> list[ModelCall[float]]:
    return [
        ModelCall(
            item=item_name(target.key, kind, index),
            messages=judge_messages(kind, reference, target.caption),
            prompt_version=prompt_version(kind),
            parse=partial(parse_score, kind=kind, lenient=lenient),
            generation=generation,
        )
        for kind in KINDS
        for index, reference in sorted(target.references.items())
    ]


@dataclass
class JudgeTally:
    """How the judgments of a set of objects went, per rubric, for results."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, status) -> n

    def add(self, kind: str, verdict: CallResult[object]) -> None:
        self.counts[(kind, verdict.status)] += 1

    def update(self, other: JudgeTally) -> None:
        self.counts.update(other.counts)

    def as_dict(self) -> dict[str, int]:
        """Judgments by status, both rubrics together."""
        return {s: sum(n for (_, st), n in self.counts.items() if st == s) for s in STATUSES}

    def by_kind(self) -> dict[str, dict[str, int]]:
        return {k: {s: self.counts[(k, s)] for s in STATUSES} for k in KINDS}

    def warnings(self, lenient: bool) -> list[str]:
        """A line per rubric whose replies did not all parse: those scores are missing."""
        parser = "first dict literal in the reply" if lenient else "whole reply as a dict literal"
        lines = []
        for kind, counts in self.by_kind().items():
            got = counts["ok"] + counts["unparsed"]
            if counts["unparsed"]:
                lines.append(
                    f"GPT-{kind.capitalize()}: {counts['unparsed']} of {got} judge replies could "
                    f"not be parsed ({'vidbench' if lenient else 'official'} parser: {parser}); "
                    "those judgments have no score"
                )
        return lines


def absent_verdict(
    target: JudgeTarget, verdicts: Mapping[str, CallResult[object]]
) -> CallResult[object] | None:
    """The first of the object's judgments that has no verdict (failed or not asked yet), or
    None when every judgment came back. Only meaningful when the run has a judge."""
    for kind in KINDS:
        for index in sorted(target.references):
            item = item_name(target.key, kind, index)
            verdict = verdicts.get(item, CallResult(item, "missing"))
            if verdict.absent:
                return verdict
    return None


def object_scores(
    target: JudgeTarget,
    verdicts: Mapping[str, CallResult[object]],
    tally: JudgeTally | None = None,
) -> dict[str, float | None]:
    """{"gpt_appearance", "gpt_action"}: the mean of the parsed scores of each kind (None when
    none parsed), plus "gpt_eval", their mean when both exist."""
    out: dict[str, float | None] = {}
    for kind in KINDS:
        values = []
        for index in sorted(target.references):
            item = item_name(target.key, kind, index)
            verdict = verdicts.get(item, CallResult(item, "missing"))
            if tally is not None:
                tally.add(kind, verdict)
            score = verdict.value_as(float) if verdict.ok else None
            if score is not None:
                values.append(score)
        out[f"gpt_{kind}"] = sum(values) / len(values) if values else None
    appearance, action = out["gpt_appearance"], out["gpt_action"]
    out["gpt_eval"] = None if appearance is None or action is None else (appearance + action) / 2
    return out
