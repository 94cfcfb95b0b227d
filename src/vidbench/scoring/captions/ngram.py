"""BLEU-1..4, ROUGE-L and METEOR per object, computed as the official 4D-Bench script does but
in one pass over all objects.

The official script calls pycocoevalcap's `Bleu(4)` and `Rouge()` once per object on raw
(untokenized) strings and nltk's `meteor_score` on whitespace tokens. One `Bleu(4)` call over
all objects returns each object's BLEU as its per-image value, and that value is computed with
the same expressions as a call on that object alone (so the numbers are identical); likewise
`Rouge`. METEOR is nltk's own function; WordNet look-ups and stems are memoised, which changes
no value.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any


def _as_coco(
    cands: Sequence[str], refs: Sequence[Sequence[str]]
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    gts = {i: list(r) for i, r in enumerate(refs)}
    res = {i: [c] for i, c in enumerate(cands)}
    return gts, res


def bleu(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> list[list[float]]:
    """Per object [BLEU-1, BLEU-2, BLEU-3, BLEU-4] (pycocoevalcap, 'closest' reference length)."""
    from pycocoevalcap.bleu.bleu import Bleu

    if not cands:
        return []
    gts, res = _as_coco(cands, refs)
    _, per_n = Bleu(4).compute_score(gts, res, verbose=0)
    return [[float(per_n[k][i]) for k in range(4)] for i in range(len(cands))]


def rouge_l(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> list[float]:
    """Per object ROUGE-L (pycocoevalcap, beta 1.2, best precision and recall over refs)."""
    from pycocoevalcap.rouge.rouge import Rouge

    if not cands:
        return []
    gts, res = _as_coco(cands, refs)
    _, scores = Rouge().compute_score(gts, res)
    return [float(s) for s in scores]


class _MemoStemmer:
    def __init__(self, stemmer: Any) -> None:
        self.stem = lru_cache(maxsize=None)(stemmer.stem)


class _MemoWordNet:
    """The only WordNet call nltk's METEOR makes, memoised."""

    def __init__(self, reader: Any) -> None:
        self.synsets = lru_cache(maxsize=None)(reader.synsets)


def meteor_nltk(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> list[float]:
    """Per object nltk METEOR on whitespace tokens (best over the references, as nltk does)."""
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score

    from vidbench.scoring.captions.wordnet import wordnet_reader

    wordnet = _MemoWordNet(wordnet_reader())
    stemmer = _MemoStemmer(PorterStemmer())
    return [
        float(meteor_score([r.split() for r in rs], c.split(), stemmer=stemmer, wordnet=wordnet))
        for c, rs in zip(cands, refs, strict=True)
    ]
