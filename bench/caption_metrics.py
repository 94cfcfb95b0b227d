"""The six automatic 4D-Bench caption metrics for 580 objects x 5 references: vidbench's one
call versus the official per-object loop (4D_Object_Captioning/.../get_other_metrics_scores.py).

    python bench/caption_metrics.py [--objects 580] [--loop-objects N] [--seed 0]

Text: the synthetic 4D generator's five captions per object as references, and a caption of
another scene (same object index, next seed) as the "model" caption.
The official loop, per object: `bert_score.score([c], [refs], model_type=...)` (which loads the
model every call), MiniLM `encode` of the caption and of the references, cidereval's `cider`
(two PTB tokenizer Java runs, then plain CIDEr), `Bleu(4)`, nltk METEOR, `Rouge()`.
vidbench: `score_captions` (one PTB Java run for all objects, BLEU/ROUGE in one library call,
memoised WordNet look-ups, one BERT load and batched BERTScore, batched SBERT on ONNX Runtime
beside the n-gram metrics; `--sbert-runtime torch` to time it on PyTorch instead).
Both use the same CIDEr document-frequency file (written here from the references, standing in
for COCO-val's) and the same BERT: `bert-base-uncased` is not available offline here, so a
2-layer BERT built from a config is used both ways (`--bert-model PATH --bert-layers N` to
measure with a real one). The n-gram values must be identical (checked with ==), the embedding
values equal to float32 rounding (checked to 1e-5). `--loop-objects N` times the loop on the
first N objects only and scales its time up (labelled as such).
The libraries are imported before anything is timed, for both sides alike.
Three vidbench calls are timed, each as a new process would make it (no model or WordNet left in
memory): the first call on a machine (empty cache: it also makes the one-time ONNX export of
MiniLM and the WordNet copy), cold (the same captions again, no sentence embeddings cached) and
warm (a second model's captions against the same references, whose SBERT embeddings the first
call stored (embed_cache.py), as when a table of many models is scored; the official script
re-encodes the references for every model).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def synthetic_captions(
    objects: int, seed: int, model: int = 1
) -> tuple[list[str], list[list[str]]]:
    """References of scene (seed, i); the "model" caption describes scene (seed + model, i)."""
    from vidbench.benchmarks.fourd.synthetic.captions import captions
    from vidbench.benchmarks.fourd.synthetic.sample import sample_scene

    refs = [captions(sample_scene(seed, i)) for i in range(objects)]
    cands = [captions(sample_scene(seed + model, i))[i % 5] for i in range(objects)]
    return cands, refs


def bert_available(name: str) -> bool:
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(name)
    except OSError:
        return False
    return True


def official_loop(cands, refs, bert: str, layers: int, df_path: Path, sbert: str) -> list[dict]:
    """The official script's per-object calls (cidereval's cider emulated: the same two
    PTBTokenizer runs and plain CIDEr with the df file)."""
    import torch
    from bert_score import score as bert_score
    from nltk.translate.meteor_score import meteor_score
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    from sentence_transformers import SentenceTransformer

    from vidbench.scoring.captions import cider
    from vidbench.scoring.captions.wordnet import wordnet_reader

    minilm = SentenceTransformer(sbert)
    wordnet = wordnet_reader()
    doc = cider.load_df(df_path)
    rows = []
    for caption, gt in zip(cands, refs, strict=True):
        _, _, f1 = bert_score([caption], [gt], model_type=bert, num_layers=layers)
        sim = minilm.similarity(minilm.encode([caption]), minilm.encode(gt))
        res = PTBTokenizer().tokenize({0: [{"caption": caption}]})[0][0]
        gts = PTBTokenizer().tokenize({0: [{"caption": r} for r in gt]})[0]
        bleu, _ = Bleu(4).compute_score({0: gt}, {0: [caption]}, verbose=0)
        rouge, _ = Rouge().compute_score({0: gt}, {0: [caption]})
        rows.append(
            {
                "bert_f1": f1.mean().item(),
                "sbert": float(torch.max(sim).numpy()),
                "cider": cider.cider([res], [gts], doc)[0],
                "bleu_4": float(bleu[3]),
                "meteor": float(
                    meteor_score([g.split() for g in gt], caption.split(), wordnet=wordnet)
                ),
                "rouge_l": float(rouge),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=580)
    parser.add_argument("--loop-objects", type=int, help="time the official loop on N objects")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bert-model", help="a BERT for BERTScore (default: a tiny one)")
    parser.add_argument("--bert-layers", type=int)
    parser.add_argument("--sbert-runtime", default="auto", choices=("auto", "onnx", "torch"))
    args = parser.parse_args()

    # Imported up front so neither side's time holds Python imports.
    import bert_score  # noqa: F401
    import nltk  # noqa: F401
    import onnxruntime  # noqa: F401
    import pycocoevalcap  # noqa: F401
    import sentence_transformers  # noqa: F401

    from vidbench.scoring.captions import cider, ptb
    from vidbench.scoring.captions.embedding import default_sbert_path
    from vidbench.scoring.captions.metrics import CaptionMetricSettings, score_captions
    from vidbench.testing.tiny_bert import tiny_bert

    cands, refs = synthetic_captions(args.objects, args.seed)
    n_words = sum(len(c.split()) for c in cands) / len(cands)
    print(f"{args.objects} objects x 5 references; candidates average {n_words:.1f} words")
    work = Path(tempfile.mkdtemp(prefix="vidbench-bench-captions-"))
    if args.bert_model:
        bert, layers = args.bert_model, args.bert_layers
    else:
        print(
            f"bert-base-uncased available offline: {bert_available('bert-base-uncased')}; "
            "using a 2-layer BERT built from a config, the same model both ways"
        )
        words = {w for t in [*cands, *(r for g in refs for r in g)] for w in re.findall(r"\w+", t)}
        bert, layers = str(tiny_bert(work / "tiny-bert", sorted(words))), 2
    _, ref_tok = ptb.per_object(cands, refs)  # the df file both sides use (not timed)
    doc = cider.corpus_df(ref_tok)
    df_path = work / "df.p"
    df_path.write_bytes(pickle.dumps({"ref_len": doc.ref_len, "df": dict(doc.df)}))

    settings = CaptionMetricSettings(
        protocol="official",
        cider_df=str(df_path),
        bert_model=bert,
        bert_layers=layers,
        sbert_runtime=args.sbert_runtime,
    )
    os.environ["VIDBENCH_CACHE"] = str(work / "cache")  # nothing cached yet

    def timed(captions: list[str], embeddings: str) -> tuple[float, Any]:
        """One call as a new process makes it (no model or WordNet left in memory)."""
        from vidbench.scoring.captions import embedding, wordnet

        for cached in (embedding._sentence_model, embedding._onnx_encoder, wordnet.wordnet_reader):
            cached.cache_clear()
        os.environ["VIDBENCH_EMBED_CACHE"] = embeddings
        start = time.perf_counter()
        scored = score_captions(captions, refs, settings)
        return time.perf_counter() - start, scored

    first_s, scored = timed(cands, "on")
    runtime = scored.info["sbert"]["runtime"]
    print(
        f"vidbench, first call:      {first_s:8.1f} s  (SBERT on {runtime}; includes the "
        "one-time model export and WordNet copy)"
    )
    ours_s, scored = timed(cands, "off")
    ours = scored.per_object
    print(f"vidbench, one call, cold:  {ours_s:8.1f} s  (no embeddings cached)")
    second, _ = synthetic_captions(args.objects, args.seed, model=2)
    warm_s, _ = timed(second, "on")
    print(f"vidbench, one call, warm:  {warm_s:8.1f} s  (another model, same references)")

    n_loop = min(args.loop_objects or args.objects, args.objects)
    start = time.perf_counter()
    loop = official_loop(cands[:n_loop], refs[:n_loop], bert, layers, df_path, default_sbert_path())
    loop_s = time.perf_counter() - start
    scaled = loop_s * args.objects / n_loop
    label = "" if n_loop == args.objects else f" ({n_loop} objects, scaled to {args.objects})"
    print(f"official per-object loop:  {scaled:8.1f} s{label}")
    print(f"speed-up, first call:      {scaled / first_s:8.1f}x")
    print(f"speed-up, cold:            {scaled / ours_s:8.1f}x")
    print(f"speed-up, warm:            {scaled / warm_s:8.1f}x")

    for metric in ("bleu_4", "rouge_l", "meteor", "cider"):
        same = all(o[metric] == r[metric] for o, r in zip(ours, loop, strict=False))
        assert same, f"{metric} differs from the official loop"
    for metric in ("bert_f1", "sbert"):
        diff = max(abs(o[metric] - r[metric]) for o, r in zip(ours, loop, strict=False))
        assert diff < 1e-5, f"{metric} differs by {diff}"
        print(f"{metric}: max |difference| {diff:.1e} (float32, batched padding)")
    print(f"BLEU-4, ROUGE-L, METEOR, CIDEr identical on {n_loop} objects")


if __name__ == "__main__":
    main()
