"""BERTScore and SBERT, batched, equal the official per-object calls of the same models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from vidbench.core.errors import ConfigError
from vidbench.scoring.captions.embedding import bertscore_f1, default_sbert_path, sbert_cosine
from vidbench.testing.tiny_bert import tiny_bert

CANDS = [
    "a red cube spins and then jumps",
    "a woman in a blue dress waves her left hand",
    "",  # an empty caption is scored, as the official code does
    "the green dog runs in circles",
]
REFS = [
    ["A red cube spins.", "a cube that is red jumps after spinning", "Red box turning", "x", "y"],
    ["a woman waves", "woman in blue waving", "a lady lifts her hand", "she waves", "blue dress"],
    ["a cone grows", "the cone gets bigger", "growing cone", "a cone", "cone"],
    ["a dog runs", "green dog running around", "the dog circles", "dog", "running dog"],
]


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    words = {
        w.strip(".").lower() for s in [*CANDS, *(r for g in REFS for r in g)] for w in s.split()
    }
    return str(tiny_bert(tmp_path_factory.mktemp("bert"), sorted(words)))


def test_bertscore_equals_bert_score_with_the_same_model(bert: str) -> None:
    from bert_score import score

    got = bertscore_f1(CANDS, REFS, bert, num_layers=2, batch_size=3)
    for i, (cand, refs) in enumerate(zip(CANDS, REFS, strict=True)):
        if not cand:
            assert got[i] == 0.0  # bert-score's value for an empty candidate
            continue
        _, _, f1 = score([cand], [refs], model_type=bert, num_layers=2)  # the official call
        assert got[i] == pytest.approx(f1.mean().item(), abs=1e-6)
    _, _, per_ref = score([CANDS[0]] * 5, REFS[0], model_type=bert, num_layers=2)
    assert got[0] == pytest.approx(per_ref.max().item(), abs=1e-6)  # best over references


def test_bertscore_model_problems_are_clear(bert: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="huggingface-cli download"):
        bertscore_f1(["a"], [["b"]], model=str(tmp_path / "no-such-bert"))
    with pytest.raises(ConfigError, match="--bert-layers"):
        bertscore_f1(["a"], [["b"]], model=bert)
    with pytest.raises(ConfigError, match="has 2 layers"):
        bertscore_f1(["a"], [["b"]], model=bert, num_layers=9)


@pytest.mark.slow
def test_sbert_equals_the_official_per_object_formula() -> None:
    from sentence_transformers import SentenceTransformer

    got = sbert_cosine(CANDS, REFS)
    model = SentenceTransformer(default_sbert_path())
    for i, (cand, refs) in enumerate(zip(CANDS, REFS, strict=True)):
        sim = model.similarity(model.encode([cand]), model.encode(refs))
        assert got[i] == pytest.approx(float(torch.max(sim).numpy()), abs=1e-5)
    assert got[0] > got[2]


def test_embeddings_are_cached_across_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from vidbench.scoring.captions import embed_cache

    monkeypatch.setenv("VIDBENCH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights").write_text("v1")
    asked: list[list[str]] = []

    def encode(sentences: list[str]) -> np.ndarray:
        asked.append(sentences)
        return np.array([[len(s), s.count("a")] for s in sentences], dtype=np.float32)

    first = embed_cache.embed(["a cat", "a dog", "dogs"], str(model), encode)
    again = embed_cache.embed(["dogs", "a new one", "a cat"], str(model), encode)
    assert asked == [["a cat", "a dog", "dogs"], ["a new one"]]
    assert (again[[0, 2]] == first[[2, 0]]).all() and again[1].tolist() == [9, 1]
    (model / "weights").write_text("v2 changed")  # another model: nothing reused
    embed_cache.embed(["a cat"], str(model), encode)
    # new weights of the same size put in place with the old modification time (rsync -a)
    before = (model / "weights").stat()
    (tmp_path / "new-weights").write_text("v3 changed")
    os.utime(tmp_path / "new-weights", ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp_path / "new-weights", model / "weights")
    embed_cache.embed(["a cat"], str(model), encode)
    monkeypatch.setenv("VIDBENCH_EMBED_CACHE", "off")
    embed_cache.embed(["a cat"], str(model), encode)
    assert asked[2:] == [["a cat"], ["a cat"], ["a cat"]]


def test_a_hub_models_cached_vectors_follow_its_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    from vidbench.scoring.captions import embed_cache

    hub = tmp_path / "hub"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    repo = hub / "models--org--minilm"
    keys = []
    for commit, weights in (("a" * 40, "v1"), ("b" * 40, "v2")):
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "model.safetensors").write_text(weights)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(commit)  # the hub cache updated to a new revision
        keys.append(embed_cache.model_key("org/minilm"))
    assert keys[0] != keys[1]
    assert embed_cache.model_folder("org/minilm") == repo / "snapshots" / ("b" * 40)
    assert embed_cache.model_folder("org/not-cached") == Path("org/not-cached")


def test_a_damaged_embedding_cache_is_started_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from vidbench.scoring.captions import embed_cache

    monkeypatch.setenv("VIDBENCH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights").write_text("v1")
    asked: list[list[str]] = []

    def encode(sentences: list[str]) -> np.ndarray:
        asked.append(sentences)
        return np.ones((len(sentences), 2), dtype=np.float32)

    embed_cache.embed(["a cat"], str(model), encode)
    (damaged,) = (tmp_path / "cache" / "embeddings").glob("*.sqlite")
    damaged.write_bytes(b"half a page of a database " * 40)  # a disk filled mid-write
    assert embed_cache.embed(["a cat", "a dog"], str(model), encode).shape == (2, 2)
    embed_cache.embed(["a dog"], str(model), encode)  # kept in the file made anew
    assert asked == [["a cat"], ["a cat", "a dog"]]
