"""The Human row of Table 2: each object's human captions scored leave-one-out.

Per object one of its captions (chosen by a seeded `random.Random(seed)` stream over the uids in
sorted order, `randint(1, n)` as the official human_caption_exp.py does, which leaves it
unseeded) plays the prediction; the metrics compare it with the other captions, the judges with
one of the others ("one" mode, drawn as gpt_judges.draw_references does) or all of them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from vidbench.benchmarks.fourd.captions.gpt_judges import draw_references
from vidbench.benchmarks.fourd.captions.rows import CaptionRow, judge_references
from vidbench.scoring.captions.metrics import ReferenceMode

HUMAN_SEED = 42
PREFIX = "human:"


def held_out(uids: Sequence[str], n_refs: int = 5, seed: int = HUMAN_SEED) -> dict[str, int]:
    """1-based index of the caption each object holds out as its "prediction"."""
    rng = random.Random(seed)
    return {uid: rng.randint(1, n_refs) for uid in sorted(uids)}


def human_rows(
    references: Mapping[str, Sequence[str]], mode: ReferenceMode, seed: int = HUMAN_SEED
) -> list[CaptionRow]:
    sizes = {len(r) for r in references.values()}
    if len(sizes) > 1 or min(sizes, default=2) < 2:
        raise ValueError("the human baseline needs the same number (>= 2) of captions per object")
    n = sizes.pop() if sizes else 5
    out = held_out(list(references), n, seed)
    drawn = draw_references(references, n, held_out=out) if mode == "one" else {}
    rows = []
    for uid in sorted(references):
        refs, k = list(references[uid]), out[uid]
        rows.append(
            CaptionRow(
                PREFIX + uid,
                uid,
                refs[k - 1],
                tuple(r for i, r in enumerate(refs, start=1) if i != k),
                judge_references(refs, mode, drawn.get(uid), exclude=k),
            )
        )
    return rows
