"""One row to score: a caption, the references the metrics compare it with, and the references
the LLM judges compare it with (see gpt_judges.py for the "one" and "all" choices); and which of
an object's human captions plays the prediction in the Human row of Table 2 (`held_out`).

The Human row scores each object's human captions leave-one-out: per object one of its captions
(chosen by a seeded `random.Random(seed)` stream over the uids in sorted order, `randint(1, n)`
as the official human_caption_exp.py does, which leaves it unseeded) plays the prediction; the
metrics compare it with the other captions, the judges with one of the others ("one" mode,
drawn as gpt_judges.draw_references does) or all of them (caption_task.py makes the rows).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vidbench.benchmarks.fourd.captions.gpt_judges import JudgeTarget, draw_references
from vidbench.scoring.captions.metrics import ReferenceMode


@dataclass(frozen=True)
class CaptionRow:
    key: str  # unique among the rows scored together: the uid, or "human:<uid>"
    uid: str
    caption: str
    references: tuple[str, ...]
    judge_references: Mapping[int, str]  # 1-based index in the object's references -> text

    def judge_target(self) -> JudgeTarget:
        return JudgeTarget(self.key, self.caption, self.judge_references)


def judge_references(
    refs: Sequence[str], mode: ReferenceMode, drawn: int | None, exclude: int | None = None
) -> dict[int, str]:
    if mode == "one":
        if drawn is None:
            raise ValueError("a drawn reference is needed in 'one' mode")
        return {drawn: refs[drawn - 1]}
    return {k: text for k, text in enumerate(refs, start=1) if k != exclude}


def model_rows(
    captions: Mapping[str, str], references: Mapping[str, Sequence[str]], mode: ReferenceMode
) -> list[CaptionRow]:
    """Rows for a model's captions (uid -> caption), each against all its references.
    `references` is the whole reference set: the seed-42 draw walks all of its uids."""
    drawn = draw_references(references) if mode == "one" else {}
    return [
        CaptionRow(
            uid,
            uid,
            caption,
            tuple(references[uid]),
            judge_references(references[uid], mode, drawn.get(uid)),
        )
        for uid, caption in sorted(captions.items())
    ]


HUMAN_SEED = 42
HUMAN_PREFIX = "human:"  # the key of a Human row: "human:<uid>"


def held_out(uids: Sequence[str], n_refs: int = 5, seed: int = HUMAN_SEED) -> dict[str, int]:
    """1-based index of the caption each object holds out as its "prediction"."""
    rng = random.Random(seed)
    return {uid: rng.randint(1, n_refs) for uid in sorted(uids)}
