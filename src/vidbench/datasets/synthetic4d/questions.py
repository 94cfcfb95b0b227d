"""Question drafts, option layout and the five-subtask question set of one object."""

from __future__ import annotations

import numpy as np

from .drafting import Draft, Generator
from .phrases import cap
from .q_action import action_question
from .q_appearance import appearance_question
from .q_counting import counting_question
from .q_spatial import spatial_question
from .q_temporal import temporal_question
from .scene import Scene

# (key suffix, Category) in the order entries are written.
SUBTASKS: tuple[tuple[str, str], ...] = (
    ("object_counting", "Object Counting"),
    ("temporal_relationship", "Temporal Relationship"),
    ("motion", "Action"),
    ("spatial_relationship", "Spatial Relationship"),
    ("appearance", "Appearance"),
)


def gold_positions(rng: np.random.Generator, n: int = len(SUBTASKS)) -> list[int]:
    """Answer positions 1..4 for n questions: each position once per block of four, shuffled."""
    out: list[int] = []
    while len(out) < n:
        out += [int(p) + 1 for p in rng.permutation(4)]
    return [out[int(i)] for i in rng.permutation(n)]


def count_options(n: int, position: int) -> list[int]:
    """Four nearby non-negative numbers with ``n`` at ``position`` (1..4).

    Ascending consecutive numbers when possible; for small ``n`` the numbers 0..3 (or the
    nearest ones) with ``n`` moved to ``position`` and the rest ascending.
    """
    start = n - position + 1
    if start >= 0:
        return list(range(start, start + 4))
    rest = [v for v in range(5) if v != n][:3]
    rest.insert(position - 1, n)
    return rest


def layout(draft: Draft, position: int, rng: np.random.Generator) -> list[str]:
    """Four "(A) ..." options with the gold answer at ``position`` (1..4)."""
    if draft.number is not None:
        texts = [str(v) for v in count_options(draft.number, position)]
    else:
        if len(draft.distractors) != 3:
            raise ValueError(f"need 3 distractors: {draft}")
        texts = [str(d) for d in rng.permutation(list(draft.distractors))]
        texts.insert(position - 1, draft.gold)
    texts = [cap(t) for t in texts]
    if len({t.lower() for t in texts}) != 4:
        raise ValueError(f"options not distinct: {texts}")
    return [f"({'ABCD'[i]}) {t}" for i, t in enumerate(texts)]


def build_questions(scene: Scene, rng: np.random.Generator) -> dict[str, dict[str, object]]:
    """One question per subtask for ``scene``, keyed "<uid>_<suffix>". Raises NoQuestion."""
    makers: dict[str, Generator] = {
        "object_counting": counting_question,
        "temporal_relationship": temporal_question,
        "motion": action_question,
        "spatial_relationship": spatial_question,
        "appearance": appearance_question,
    }
    drafts = [makers[suffix](scene, rng) for suffix, _ in SUBTASKS]
    positions = gold_positions(rng)
    out: dict[str, dict[str, object]] = {}
    for (suffix, category), draft, pos in zip(SUBTASKS, drafts, positions, strict=True):
        out[f"{scene.uid}_{suffix}"] = {
            "Question": draft.question,
            "Options": layout(draft, pos, rng),
            "Answer index": pos,
            "Category": category,
        }
    return out
