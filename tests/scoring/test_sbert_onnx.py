"""SBERT on ONNX Runtime: the same numbers, one export per model, a bad export refused."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vidbench.core.errors import ConfigError
from vidbench.scoring.captions import sbert_onnx
from vidbench.scoring.captions.embedding import default_sbert_path, sbert_cosine, sbert_runtime
from vidbench.scoring.captions.metrics import CaptionMetricSettings, score_captions
from vidbench.testing.tiny_bert import tiny_sentence_model

SENTENCES = [
    "a red cube spins and then jumps",
    "A woman in a blue dress waves her left hand, then turns around and walks away slowly.",
    "dog",
    "",
    "the green dog runs in circles while a small cat watches it from the top of a wooden box",
    "Ünïcode — and punctuation!?",
] * 3  # more sentences than one batch, lengths in every order


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIDBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("VIDBENCH_EMBED_CACHE", "off")


def load(path: str | Path):  # type: ignore[no-untyped-def]
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu")


@pytest.mark.slow
def test_minilm_on_onnx_runtime_equals_sentence_transformers() -> None:
    path = default_sbert_path()
    model = load(path)
    encoder = sbert_onnx.OnnxSentenceEncoder(model, path, workers=2)
    got = encoder.encode(SENTENCES, batch_size=4)
    expected = model.encode(SENTENCES, batch_size=64)
    assert got.shape == expected.shape == (len(SENTENCES), 384)
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)  # the model's Normalize ran


@pytest.mark.slow
def test_the_two_runtimes_give_the_same_sbert_scores() -> None:
    cands = SENTENCES[:3]
    refs = [SENTENCES[3:8], SENTENCES[1:6], SENTENCES[:5]]
    onnx = sbert_cosine(cands, refs, runtime="onnx")
    torch = sbert_cosine(cands, refs, runtime="torch")
    assert onnx == pytest.approx(torch, abs=1e-5)
    assert onnx[1] == pytest.approx(1.0, abs=1e-5)  # candidate 1 is among its references


def test_export_is_made_once_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    path = str(tiny_sentence_model(tmp_path / "tiny", ["cube", "spins"]))
    exports = []
    real_export = torch.onnx.export
    monkeypatch.setattr(
        torch.onnx, "export", lambda *a, **k: exports.append(1) or real_export(*a, **k)
    )
    first = sbert_onnx.OnnxSentenceEncoder(load(path), path)
    again = sbert_onnx.OnnxSentenceEncoder(load(path), path)
    assert len(exports) == 1 and first.path == again.path and first.path.is_file()
    assert first.path.is_relative_to(tmp_path / "cache" / "onnx")
    assert np.abs(again.encode(SENTENCES) - load(path).encode(SENTENCES)).max() < 1e-5


def test_an_export_that_disagrees_with_pytorch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    one = str(tiny_sentence_model(tmp_path / "one", ["cube"], seed=0))
    other = str(tiny_sentence_model(tmp_path / "other", ["cube"], seed=1))
    wrong = sbert_onnx.OnnxSentenceEncoder(load(other), other).path

    def export_gone_wrong(*args: Any, **kwargs: object) -> None:
        args[2].write(wrong.read_bytes())  # a graph that computes something else (other weights)

    monkeypatch.setattr(torch.onnx, "export", export_gone_wrong)
    with pytest.raises(ConfigError, match=r"differs from PyTorch .*--sbert-runtime torch"):
        sbert_onnx.OnnxSentenceEncoder(load(one), one)
    target = sbert_onnx.export_path(one)
    assert not target.exists()  # nothing kept
    assert not target.parent.exists() or list(target.parent.iterdir()) == []
    with pytest.raises(ConfigError, match="differs from PyTorch"):  # and not trusted later
        sbert_onnx.OnnxSentenceEncoder(load(one), one)


def test_runtime_choice_and_record() -> None:
    assert sbert_runtime("auto", "cpu") == "onnx"
    assert sbert_runtime("auto", "cuda:0") == "torch"
    assert sbert_runtime("torch", "cpu") == "torch"
    with pytest.raises(ConfigError, match="unknown SBERT runtime"):
        CaptionMetricSettings(sbert_runtime="tensorrt")
    scored = score_captions(
        ["a cube spins"],
        [["a cube turns", "spinning cube"]],
        CaptionMetricSettings(metrics=("bleu", "sbert"), sbert_runtime="torch"),
    )
    assert scored.info["sbert"]["runtime"] == "torch"
    assert 0 < scored.per_object[0]["sbert"] < 1 and "bleu_4" in scored.per_object[0]


def test_an_error_beside_sbert_stops_its_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vidbench.scoring.captions import ngram

    path = str(tiny_sentence_model(tmp_path / "tiny", ["cube"]))
    runs: list[int] = []
    real_run = sbert_onnx._token_embeddings
    monkeypatch.setattr(sbert_onnx, "_token_embeddings", lambda *a: runs.append(1) or real_run(*a))
    cands = [f"caption number {i} of a cube" for i in range(200)]  # 25 batches of 8
    refs = [[f"reference {i} {j}" for j in range(5)] for i in range(200)]

    def bleu_fails(*args: object) -> list[list[float]]:
        raise RuntimeError("n-gram scoring failed")

    monkeypatch.setattr(ngram, "bleu", bleu_fails)
    settings = CaptionMetricSettings(metrics=("bleu", "sbert"), sbert_model=path)
    with pytest.raises(RuntimeError, match="n-gram scoring failed"):
        score_captions(cands, refs, settings)
    assert len(runs) < 1200 / 8 / 2  # most of the 150 batches never ran

    encoder = sbert_onnx.OnnxSentenceEncoder(load(path), path)
    runs.clear()
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        encoder.encode(cands, cancel=stop)
    assert runs == []  # nothing started once cancelled


@pytest.mark.slow
def test_the_torch_runtime_stops_when_cancelled_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vidbench.scoring.captions import embedding

    monkeypatch.setenv("VIDBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(embedding, "TORCH_CHUNK", 2)  # 3 sentences: two chunks
    path = str(tiny_sentence_model(tmp_path / "tiny", ["cube", "red"]))
    cands, refs = ["a red cube", "a cube"], [["red cube"], ["red cube"]]
    got = sbert_cosine(cands, refs, path, runtime="torch", cancel=threading.Event())
    model = load(path)
    expected = [
        float(model.similarity(model.encode([c]), model.encode(r)).max())
        for c, r in zip(cands, refs, strict=True)
    ]
    assert got == pytest.approx(expected, abs=1e-5)
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        sbert_cosine(["a new caption"], [["red cube"]], path, runtime="torch", cancel=stop)
