"""The standard corpus-level COCO caption evaluation (pycocoevalcap's COCOEvalCap recipe).

Candidates and references are PTB-tokenized (one Java run), then BLEU-1..4 over the corpus,
METEOR 1.5 (Java, one process for the whole call), ROUGE-L and CIDEr-D (document frequencies
from all the references, Gaussian length penalty, clipping). BLEU and METEOR are corpus
statistics (not means of per-object values); ROUGE-L and CIDEr-D are means of per-object values.
This is not what the 4D-Bench paper reports (see ngram.py / cider.py for that); results label it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from vidbench.core.errors import ConfigError
from vidbench.scoring.captions import ptb


@dataclass
class CocoScores:
    per_object: dict[str, list[float]] = field(default_factory=dict)
    corpus: dict[str, float] = field(default_factory=dict)


def meteor_java(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> tuple[float, list[float]]:
    """METEOR 1.5 (-l en -norm): corpus score and per-object scores, one Java process."""
    from pycocoevalcap.meteor.meteor import Meteor

    ptb.java()
    scorer = Meteor()
    process = scorer.meteor_p
    try:
        gts = {i: list(r) for i, r in enumerate(refs)}
        res = {i: [c] for i, c in enumerate(cands)}
        corpus, per_object = scorer.compute_score(gts, res)
    except (ValueError, OSError) as e:  # Java stopped (no memory for -Xmx2G, a broken JRE)
        process.kill()
        said = process.stderr.read().decode(errors="replace").strip()[-500:]
        raise ConfigError(f"METEOR 1.5 (Java) failed: {said or e}") from e
    finally:
        # compute_score keeps its lock when it fails, and the scorer's __del__ takes it: let
        # it go, or the garbage collector waits for it forever
        if scorer.lock.locked():
            scorer.lock.release()
        process.kill()
        process.wait()
        with contextlib.suppress(OSError):  # a pipe to a Java that stopped
            process.stdin.close()
    return float(corpus), [float(s) for s in per_object]


def coco_scores(
    cands: Sequence[str], refs: Sequence[Sequence[str]], metrics: Sequence[str]
) -> CocoScores:
    """COCO metrics among bleu, meteor, rouge, cider for the whole set in one call."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    out = CocoScores()
    if not cands:
        return out
    cand_tok, ref_tok = ptb.corpus(cands, refs)
    gts = {i: r for i, r in enumerate(ref_tok)}
    res = {i: [c] for i, c in enumerate(cand_tok)}
    if "bleu" in metrics:
        corpus, per_n = Bleu(4).compute_score(gts, res, verbose=0)
        for k in range(4):
            out.corpus[f"bleu_{k + 1}"] = float(corpus[k])
            out.per_object[f"bleu_{k + 1}"] = [float(x) for x in per_n[k]]
    if "meteor" in metrics:
        out.corpus["meteor"], out.per_object["meteor"] = meteor_java(cand_tok, ref_tok)
    if "rouge" in metrics:
        mean, scores = Rouge().compute_score(gts, res)
        out.corpus["rouge_l"], out.per_object["rouge_l"] = float(mean), [float(x) for x in scores]
    if "cider" in metrics:
        mean, scores = Cider().compute_score(gts, res)
        out.corpus["cider"], out.per_object["cider"] = float(mean), [float(x) for x in scores]
    return out
