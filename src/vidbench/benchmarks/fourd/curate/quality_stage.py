"""`vidbench curate 4d quality train|predict`: the quality classifier (quality.py) on rendered
objects (<uid>/view_{k}_rgb_white_bg.mp4).

train: labels from a CSV (uid,label; label one of quality.LABELS), the first frame of view 0 of
each object, a seeded held-out split; writes OUT/model/ (encoder, head) and OUT/quality_train.json
(accuracy and confusion matrix on the held-out objects). predict: the first frame of 8 views
spread evenly over the ring, one vote each (quality.vote); writes OUT/quality.jsonl and the
"quality" stage of OUT/funnel.json (kept: high quality). An unreadable video or unknown label is
named with its uid and file and left out; the others go on.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vidbench.benchmarks.fourd.curate import funnel
from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.benchmarks.fourd.curate.motion_filter import object_videos
from vidbench.benchmarks.fourd.curate.quality import (
    KEEP,
    LABELS,
    MODEL_DIR,
    Classifier,
    confusion,
    split,
    vote,
)
from vidbench.benchmarks.fourd.synthetic.writer import video_name
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.files import write_json, write_jsonl
from vidbench.media.decode import decode_frames, probe
from vidbench.progress import progress_bar

VOTE_VIEWS = 8


@dataclass(frozen=True)
class TrainOptions:
    videos: Path  # rendered objects: <uid>/view_0_rgb_white_bg.mp4
    labels: Path  # CSV uid,label
    weights: str  # CLIP vision weights: a folder or a Hugging Face cache name
    out: Path  # OUT/model and OUT/quality_train.json
    held_out: float = 0.2  # fraction of the objects kept for evaluation
    epochs: int = 200
    lr: float = 1e-2
    finetune: bool = False  # train the encoder too, not only the head
    seed: int = 0


@dataclass(frozen=True)
class PredictOptions:
    videos: Path  # rendered objects: <uid>/view_K_rgb_white_bg.mp4
    model: Path  # the model folder `train` wrote (OUT/model)
    out: Path | None = None  # quality.jsonl and funnel.json (default: videos)
    progress: bool = True


def first_frame(path: Path) -> np.ndarray:
    return decode_frames(path, probe(path), [0])[0]


def read_labels(path: Path) -> tuple[dict[str, int], list[AssetProblem]]:
    """uid -> class index from a CSV with columns uid,label."""
    labels: dict[str, int] = {}
    problems = []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigError(f"labels file {path}: not a readable CSV ({e})") from None
    if rows and not {"uid", "label"} <= set(rows[0]):
        raise ConfigError(f"{path}: needs the columns uid,label")
    for number, row in enumerate(rows, 2):
        label = (row.get("label") or "").strip()
        if label not in LABELS:
            problems.append(
                AssetProblem(
                    row.get("uid") or "?", str(path), "unknown label", f"line {number}: {label!r}"
                )
            )
        else:
            labels[row["uid"].strip()] = LABELS.index(label)
    return labels, problems


def train(options: TrainOptions) -> dict:
    labels, problems = read_labels(options.labels)
    videos = object_videos(options.videos, 0)
    uids, images, targets = [], [], []
    for uid, target in labels.items():
        path = videos.get(uid, options.videos / uid / video_name(0))
        try:
            images.append(first_frame(path))
        except MediaError as e:
            problems.append(AssetProblem(uid, str(path), "unreadable video", str(e)))
            continue
        uids.append(uid)
        targets.append(target)
    if len(uids) < 2:
        raise ConfigError(f"{options.labels}: fewer than 2 labelled objects with a readable video")
    train_ix, test_ix = split(uids, options.held_out, options.seed)
    model = Classifier.new(options.weights)
    losses = model.train(
        [images[i] for i in train_ix],
        [targets[i] for i in train_ix],
        epochs=options.epochs,
        lr=options.lr,
        finetune=options.finetune,
        seed=options.seed,
    )
    predicted = model.probabilities([images[i] for i in test_ix]).argmax(axis=1).tolist()
    truth = [targets[i] for i in test_ix]
    result = {
        "labels": list(LABELS),
        "train": len(train_ix),
        "held_out": len(test_ix),
        "accuracy": float(np.mean(np.array(predicted) == np.array(truth))),
        "confusion": confusion(truth, predicted),
        "final_loss": losses[-1] if losses else None,
        "problems": [p.to_json() for p in problems],
    }
    out = options.out
    model.save(out / MODEL_DIR)
    write_json(out / "quality_train.json", result, indent=1)
    return result


def vote_views(available: int, count: int = VOTE_VIEWS) -> list[int]:
    """``count`` views spread evenly over ``available`` (all of them when fewer)."""
    if available <= count:
        return list(range(available))
    return sorted({round(i * available / count) for i in range(count)})


def predict(options: PredictOptions) -> tuple[list[dict], list[AssetProblem]]:
    videos = options.videos
    if not videos.is_dir():
        raise ConfigError(f"not a folder of rendered objects: {videos}")
    objects = sorted(p for p in videos.iterdir() if p.is_dir() and (p / video_name(0)).exists())
    if not objects:
        raise ConfigError(f"{videos}: no rendered objects (<uid>/{video_name(0)}) in it")
    model = Classifier.load(options.model)
    records, dropped = [], []
    with progress_bar(disable=not options.progress) as bar:
        task = bar.add_task("quality", total=len(objects))
        for folder in objects:
            views = len(list(folder.glob("view_*_rgb_white_bg.mp4")))
            paths = [folder / video_name(k) for k in vote_views(views)]
            try:
                images = [first_frame(p) for p in paths]
            except MediaError as e:
                dropped.append(AssetProblem(folder.name, str(folder), "unreadable video", str(e)))
                bar.advance(task)
                continue
            probs = model.probabilities(images)
            per_view = [LABELS[i] for i in probs.argmax(axis=1)]
            label = vote(per_view, probs)
            records.append({"uid": folder.name, "label": label, "views": per_view})
            if label != KEEP:
                dropped.append(AssetProblem(folder.name, str(folder), label))
            bar.advance(task)
    out = options.out or videos
    write_jsonl(out / "quality.jsonl", records)
    kept = sum(r["label"] == KEEP for r in records)
    funnel.record(out, "quality", funnel.stage_count(len(objects), kept, dropped))
    return records, dropped
