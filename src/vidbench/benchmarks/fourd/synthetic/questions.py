"""Question drafts, option layout and the five-subtask question set of one object."""

from __future__ import annotations

import numpy as np

from vidbench.benchmarks.fourd.loader import QARecord
from vidbench.benchmarks.fourd.synthetic.drafting import Draft, Generator
from vidbench.benchmarks.fourd.synthetic.phrases import cap
from vidbench.benchmarks.fourd.synthetic.q_action import action_question
from vidbench.benchmarks.fourd.synthetic.q_appearance import appearance_question
from vidbench.benchmarks.fourd.synthetic.q_counting import counting_question
from vidbench.benchmarks.fourd.synthetic.q_spatial import spatial_question
from vidbench.benchmarks.fourd.synthetic.q_temporal import temporal_question
from vidbench.benchmarks.fourd.synthetic.scene import Scene

# (key suffix, Category) in the order entries are written.
SUBTASKS: tuple[tuple[str, str], ...] = (
    ("object_counting", "Object Counting"),
    ("temporal_relationship", "Temporal Relationship"),
    ("motion", "Action"),
    ("spatial_relationship", "Spatial Relationship"),
    ("appearance", "Appearance"),
)


def gold_positions(seed: int, index: int) -> list[int]:
    """Answer positions 1..4 of object ``index``'s questions, one per subtask in SUBTASKS order.

    Each subtask deals positions from its own seeded deck of shuffled blocks of the four, so over
    any four consecutive objects every position is the gold answer of each subtask once: the
    letters are balanced per subtask (a constant answer scores 25%), and an object's positions
    do not depend on which other objects were generated."""
    block, offset = divmod(index, 4)
    return [
        int(np.random.default_rng([seed, k, block, 0x601D]).permutation(4)[offset]) + 1
        for k in range(len(SUBTASKS))
    ]


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


def build_questions(
    scene: Scene, rng: np.random.Generator, positions: list[int]
) -> dict[str, QARecord]:
    """One question per subtask for ``scene``, keyed "<uid>_<suffix>", the gold answer of each
    at its position in ``positions`` (1..4, SUBTASKS order). Raises NoQuestion."""
    makers: dict[str, Generator] = {
        "object_counting": counting_question,
        "temporal_relationship": temporal_question,
        "motion": action_question,
        "spatial_relationship": spatial_question,
        "appearance": appearance_question,
    }
    drafts = [makers[suffix](scene, rng) for suffix, _ in SUBTASKS]
    out: dict[str, QARecord] = {}
    for (suffix, category), draft, pos in zip(SUBTASKS, drafts, positions, strict=True):
        out[f"{scene.uid}_{suffix}"] = {
            "Question": draft.question,
            "Options": layout(draft, pos, rng),
            "Answer index": pos,
            "Category": category,
        }
    return out
