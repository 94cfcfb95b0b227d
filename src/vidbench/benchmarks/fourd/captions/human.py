"""The Human row of Table 2: each object's human captions scored leave-one-out.

Per object one of its captions (chosen by a seeded `random.Random(seed)` stream over the uids in
sorted order, `randint(1, n)` as the official human_caption_exp.py does, which leaves it
unseeded) plays the prediction; the metrics compare it with the other captions, the judges with
one of the others ("one" mode, drawn as gpt_judges.draw_references does) or all of them
(caption_task.py makes the rows).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

HUMAN_SEED = 42
PREFIX = "human:"


def held_out(uids: Sequence[str], n_refs: int = 5, seed: int = HUMAN_SEED) -> dict[str, int]:
    """1-based index of the caption each object holds out as its "prediction"."""
    rng = random.Random(seed)
    return {uid: rng.randint(1, n_refs) for uid in sorted(uids)}
