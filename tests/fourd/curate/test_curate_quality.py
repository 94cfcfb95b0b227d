"""The quality classifier: a tiny CLIP vision model trained on generated labelled objects beats
chance on held-out ones; the 8-view vote, ties included; predict writes the funnel stage."""

from __future__ import annotations

import numpy as np
import pytest

from vidbench.benchmarks.fourd.curate.quality import (
    LABELS,
    Classifier,
    PredictOptions,
    TrainOptions,
    predict,
    train,
    vote,
    vote_views,
)
from vidbench.media.encode import write_mp4
from vidbench.report.funnel import Funnel

pytest.importorskip("transformers")


def test_vote_majority_and_ties() -> None:
    high, flat, low = LABELS
    assert vote([high] * 5 + [flat] * 3) == high
    assert vote([flat, flat, low, high, high, low, low, flat]) == low  # 3-3 tie: the worse class
    probs = [[0.9, 0.1, 0.0]] * 4 + [[0.0, 0.6, 0.4]] * 4
    assert vote([high] * 4 + [flat] * 4, probs) == high  # 4-4 tie: summed probability
    with pytest.raises(ValueError):
        vote([])
    assert vote_views(24) == [0, 3, 6, 9, 12, 15, 18, 21] and vote_views(2) == [0, 1]


def _image(label: int, rng: np.random.Generator) -> np.ndarray:
    img = np.full((32, 32, 3), 255, np.uint8)
    if label == 0:  # textured, centred
        img[6:26, 6:26] = rng.integers(0, 256, (20, 20, 3))
    elif label == 1:  # flat colour, centred
        img[6:26, 6:26] = rng.integers(60, 200)
    else:  # mostly outside the view
        img[:8, 24:] = rng.integers(0, 256, (8, 8, 3))
    return img


@pytest.mark.slow
def test_tiny_classifier_beats_chance(tmp_path, capfd) -> None:
    import torch
    from transformers import CLIPVisionConfig

    rng = np.random.default_rng(0)
    videos, rows = tmp_path / "videos", ["uid,label"]
    for i in range(48):
        label = i % 3
        frame = _image(label, rng)
        for view in range(8):
            write_mp4(videos / f"obj{i}" / f"view_{view}_rgb_white_bg.mp4", [frame])
        rows.append(f"obj{i},{LABELS[label]}")
    rows.append("objX,shiny")
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    config = CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        image_size=32, patch_size=8,
    )  # fmt: skip
    weights = tmp_path / "tiny"
    torch.manual_seed(0)  # the random encoder is the same whatever test ran before
    Classifier.new(config=config).save(weights)
    options = TrainOptions(
        videos, tmp_path / "labels.csv", str(weights / "encoder"), tmp_path / "q",
        held_out=0.25, epochs=300, lr=0.05, finetune=False, seed=0,
    )  # fmt: skip
    result = train(options)
    assert result["held_out"] == 12 and result["train"] == 36
    assert result["accuracy"] > 0.6  # chance: 1/3
    assert sum(map(sum, result["confusion"])) == 12
    assert [p["reason"] for p in result["problems"]] == ["unknown label"]

    records, dropped = predict(
        PredictOptions(videos, tmp_path / "q" / "model", tmp_path / "p", progress=False)
    )
    assert len(records) == 48 and all(len(r["views"]) == 8 for r in records)
    right = sum(r["label"] == LABELS[int(r["uid"][3:]) % 3] for r in records)
    assert right / 48 > 0.6
    stage = Funnel.read(tmp_path / "p").stages["quality"]
    assert stage.entered == 48 and stage.kept + len(dropped) == 48

    # the command line gives the same labels
    from vidbench.cli import main

    model = str(tmp_path / "q" / "model")
    capfd.readouterr()
    assert main(["--no-progress", "curate", "4d", "quality", "predict", str(videos),
                 "--model", model, "--out", str(tmp_path / "cli")]) == 0  # fmt: skip
    # its own output only: no tqdm bars or torchvision warning of transformers'
    printed = capfd.readouterr()
    said = printed.out + printed.err
    assert "Loading weights" not in said and "torchvision" not in said and "it/s" not in said
    assert "of 48 objects are high quality" in said
    assert (tmp_path / "cli" / "quality.jsonl").read_text() == (
        tmp_path / "p" / "quality.jsonl"
    ).read_text()


@pytest.mark.slow
def test_objects_without_a_voting_view_are_counted_and_not_kept(tmp_path) -> None:
    """An object missing a view that votes (view 0 included) is dropped as "missing view",
    not judged from other angles nor left out of the count; `curate 4d qa` skips it, and an
    object quality.jsonl does not name, rather than taking it as high quality."""
    from transformers import CLIPVisionConfig

    from vidbench.benchmarks.fourd.curate.qa.objects import list_objects
    from vidbench.media.spec import FrameSpec

    videos = tmp_path / "videos"
    frame = _image(0, np.random.default_rng(0))
    for uid, views in {"full": range(8), "gap": [0, 1, 2, 4, 5, 6, 7], "no0": range(1, 8)}.items():
        for view in views:
            write_mp4(videos / uid / f"view_{view}_rgb_white_bg.mp4", [frame])
    config = CLIPVisionConfig(
        hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1,
        image_size=32, patch_size=16,
    )  # fmt: skip
    Classifier.new(config=config).save(tmp_path / "model")
    records, dropped = predict(PredictOptions(videos, tmp_path / "model", progress=False))
    assert {p.uid: p.reason for p in dropped if p.reason == "missing view"} == {
        "gap": "missing view", "no0": "missing view"
    }  # fmt: skip
    assert "[3]" in next(p.detail for p in dropped if p.uid == "gap")
    stage = Funnel.read(videos).stages["quality"]
    assert stage.entered == 3 and stage.dropped["missing view"] == 2
    assert [r["uid"] for r in records] == ["full", "gap", "no0"]

    write_mp4(videos / "late" / "view_1_rgb_white_bg.mp4", [frame])  # added after predict
    listing = list_objects(videos, FrameSpec(views=(1,), frames=1))
    reasons = {s.uid: s.reason for s in listing.skipped}
    assert reasons["gap"] == reasons["no0"] == reasons["late"] == "quality: not assessed"
