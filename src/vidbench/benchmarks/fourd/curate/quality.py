"""The visual quality classifier (4D-Bench paper, section 3.2 "Object visual quality assessment"
and supplement B.2): a CLIP visual encoder with a linear head, three classes (high quality,
textureless, low overall quality), and `vidbench curate 4d quality train|predict` on rendered
objects (<uid>/view_{k}_rgb_white_bg.mp4).

train: labels from a CSV (uid,label; label one of LABELS), the first frame of view 0 of each
object, a seeded held-out split; writes OUT/model/ (encoder, head) and OUT/quality_train.json
(accuracy and confusion matrix on the held-out objects). predict: the first frame of 8 views
spread evenly over the ring, one vote each (`vote`: the majority); writes OUT/quality.jsonl and
the "quality" stage of OUT/funnel.json (kept: high quality). An unreadable video, a missing view
that votes or an unknown label is named with its uid and file and left out (quality.jsonl
records it with `label` null and the `error`, so `curate 4d qa` skips it); the others go on.

Why transformers' CLIPVisionModel and not open_clip: open_clip imports torchvision, and PyPI's
torchvision does not import beside the torch 2.13.0 CPU build this project installs (its C++
operators are built for another torch: "operator torchvision::nms does not exist"); the only
torchvision that matches needs torch 2.14.1, a 5.5 GB CUDA build. transformers' CLIPVisionModel is
the same ViT (OpenAI CLIP weights load from a local folder or the Hugging Face cache, e.g.
openai/clip-vit-base-patch32) and its slow CLIPImageProcessor needs only PIL and numpy.

Training is a linear probe by default (encoder frozen, features computed once: fast, and what a
few thousand labels support); `finetune=True` trains the encoder too, as the paper does.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vidbench.benchmarks.fourd.curate import funnel
from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.benchmarks.fourd.curate.motion_filter import (
    MissingView,
    object_folders,
    object_videos,
    render_digest,
)
from vidbench.benchmarks.fourd.synthetic.writer import object_views, video_name
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.files import write_json, write_jsonl
from vidbench.extras import require
from vidbench.media.decode import decode_frames, probe
from vidbench.progress import progress_bar

if TYPE_CHECKING:  # read untyped (pyproject: [tool.mypy]): these name them
    from types import ModuleType

    import torch
    from transformers import BaseImageProcessor, CLIPVisionConfig, CLIPVisionModel

LABELS = ("high quality", "textureless", "low overall quality")
KEEP = LABELS[0]
HEAD_FILE = "head.pt"
ENCODER_DIR = "encoder"
LABELS_FILE = "labels.json"
MODEL_DIR = "model"  # OUT/model: what `train` writes and `predict --model` reads


def vote(labels: Sequence[str], probabilities: npt.ArrayLike | None = None) -> str:
    """Majority label of the per-view predictions. Ties go to the tied label with the highest
    summed probability over the views (when given), then to the lower-quality label (the later
    one in LABELS): a doubtful object is not kept."""
    if not labels:
        raise ValueError("no view predictions to vote on")
    counts = Counter(labels)
    best = max(counts.values())
    tied = [label for label in LABELS if counts.get(label) == best]
    if len(tied) == 1:
        return tied[0]
    if probabilities is not None:
        summed = np.asarray(probabilities, dtype=np.float64).sum(axis=0)
        top = max(summed[LABELS.index(t)] for t in tied)
        tied = [t for t in tied if summed[LABELS.index(t)] >= top - 1e-12]
    return tied[-1]


def _torch() -> ModuleType:
    require("curate 4d quality", ["torch", "transformers"], "hf")
    import torch

    return torch


def _processor_class() -> type[BaseImageProcessor]:
    """transformers' PIL image processor for CLIP: `CLIPImageProcessor` asks for torchvision
    (see above) and warns on every load without it; transformers before 5 has only that one."""
    import transformers

    return getattr(transformers, "CLIPImageProcessorPil", None) or transformers.CLIPImageProcessor


@contextmanager
def _quiet() -> Iterator[None]:
    """No tqdm bars of transformers ("Loading weights", "Writing model shards") over the
    command's own output."""
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            logging.enable_progress_bar()


def _pretrained(weights: str | Path, what: str) -> tuple[CLIPVisionModel, BaseImageProcessor]:
    """The CLIP vision encoder and its image processor from ``weights`` (a folder, or a name in
    the Hugging Face cache); a ConfigError saying where they were looked for and how to
    provide them when they cannot be loaded."""
    from transformers import CLIPVisionModel

    from vidbench.models.local_source import weights_not_found

    try:
        with _quiet():
            encoder = CLIPVisionModel.from_pretrained(str(weights))
            processor = _processor_class().from_pretrained(str(weights))
    except (OSError, ValueError) as e:  # transformers' "not found", "not a valid JSON file", ...
        raise weights_not_found(what, str(weights), str(e).strip().splitlines()[0]) from None
    return encoder, processor


class Classifier:
    """CLIP vision encoder + linear head over its pooled output; images in, class scores out."""

    def __init__(
        self, encoder: CLIPVisionModel, processor: BaseImageProcessor, head: torch.nn.Linear
    ) -> None:
        self.encoder, self.processor, self.head = encoder, processor, head

    @classmethod
    def new(
        cls, weights: str | Path | None = None, config: CLIPVisionConfig | None = None
    ) -> Classifier:
        """From pretrained ``weights`` (a folder, or a name in the Hugging Face cache: offline),
        or randomly initialised from a CLIPVisionConfig ``config`` (tests)."""
        torch = _torch()
        from transformers import CLIPVisionModel

        if config is not None:
            encoder = CLIPVisionModel(config)
            side = config.image_size
            processor = _processor_class()(
                size={"shortest_edge": side}, crop_size={"height": side, "width": side}
            )
        else:
            encoder, processor = _pretrained(str(weights), "CLIP weights (--weights)")
        head = torch.nn.Linear(encoder.config.hidden_size, len(LABELS))
        return cls(encoder.eval(), processor, head)

    @classmethod
    def load(cls, folder: Path) -> Classifier:
        """A classifier saved by :meth:`save`."""
        torch = _torch()
        folder = Path(folder)
        missing = [n for n in (ENCODER_DIR, HEAD_FILE) if not (folder / n).exists()]
        if missing:
            raise ConfigError(
                f"--model {folder}: not a model folder of `curate 4d quality train` (no "
                f"{' or '.join(missing)} in it); give its OUT/{MODEL_DIR}"
            )
        encoder, processor = _pretrained(folder / ENCODER_DIR, "quality model encoder")
        head = torch.nn.Linear(encoder.config.hidden_size, len(LABELS))
        try:
            head.load_state_dict(torch.load(folder / HEAD_FILE, weights_only=True))
        except (OSError, RuntimeError, ValueError, KeyError) as e:  # not a saved head of ours
            raise ConfigError(f"{folder / HEAD_FILE}: not readable ({e})") from None
        return cls(encoder.eval(), processor, head)

    def save(self, folder: Path) -> None:
        torch = _torch()
        folder = Path(folder)
        with _quiet():
            self.encoder.save_pretrained(folder / ENCODER_DIR)
            self.processor.save_pretrained(folder / ENCODER_DIR)
        torch.save(self.head.state_dict(), folder / HEAD_FILE)
        (folder / LABELS_FILE).write_text(json.dumps(list(LABELS)) + "\n", encoding="utf-8")

    def pixels(self, images: Sequence[np.ndarray]) -> torch.Tensor:
        return self.processor(images=list(images), return_tensors="pt")["pixel_values"]

    def features(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.encoder(pixel_values=pixels).pooler_output

    def probabilities(self, images: Sequence[np.ndarray], batch: int = 32) -> np.ndarray:
        """(images, classes) softmax probabilities."""
        torch = _torch()
        out = []
        with torch.no_grad():
            for i in range(0, len(images), batch):
                logits = self.head(self.features(self.pixels(images[i : i + batch])))
                out.append(torch.softmax(logits, dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, len(LABELS)))

    def train(
        self,
        images: Sequence[np.ndarray],
        labels: Sequence[int],
        epochs: int = 200,
        lr: float = 1e-2,
        finetune: bool = False,
        seed: int = 0,
        batch: int = 64,
    ) -> list[float]:
        """Fit the head (and the encoder when ``finetune``) with cross-entropy; the loss per
        epoch."""
        torch = _torch()
        torch.manual_seed(seed)
        self.head.reset_parameters()  # its start from the seed too, whatever ran before
        target = torch.tensor(list(labels))
        batches = [self.pixels(images[i : i + batch]) for i in range(0, len(images), batch)]
        params = list(self.head.parameters())
        if finetune:
            params += list(self.encoder.parameters())
            self.encoder.train()
        else:
            with torch.no_grad():
                frozen = [self.features(b) for b in batches]
        optimiser = torch.optim.AdamW(params, lr=lr if not finetune else lr / 100)
        losses = []
        for _ in range(epochs):
            total, start = 0.0, 0
            for i, pixels in enumerate(batches):
                features = self.features(pixels) if finetune else frozen[i]
                part = target[start : start + len(pixels)]
                loss = torch.nn.functional.cross_entropy(self.head(features), part)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total += loss.item() * len(pixels)
                start += len(pixels)
            losses.append(total / len(images))
        self.encoder.eval()
        return losses


def confusion(truth: Sequence[int], predicted: Sequence[int]) -> list[list[int]]:
    """Counts [true class][predicted class]."""
    matrix = [[0] * len(LABELS) for _ in LABELS]
    for t, p in zip(truth, predicted, strict=True):
        matrix[t][p] += 1
    return matrix


def split(uids: Sequence[str], held_out: float, seed: int) -> tuple[list[int], list[int]]:
    """Seeded (train, held-out) index lists; at least one object on each side."""
    order = np.random.default_rng(seed).permutation(len(uids))
    n_test = min(max(1, round(len(uids) * held_out)), len(uids) - 1)
    return sorted(order[n_test:].tolist()), sorted(order[:n_test].tolist())


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
    """uid -> class index from a CSV with columns uid,label (a spreadsheet's byte-order mark and
    the label's case and spacing do not matter); a uid given two labels is a problem, not the
    last one's."""
    labels: dict[str, int] = {}
    lines: dict[str, int] = {}  # uid -> the line that labelled it
    problems = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigError(f"labels file {path}: not a readable CSV ({e})") from None
    if rows and not {"uid", "label"} <= set(rows[0]):
        raise ConfigError(f"{path}: needs the columns uid,label")
    for number, row in enumerate(rows, 2):
        given = row.get("label") or ""
        label = " ".join(given.split()).lower()
        uid = (row.get("uid") or "").strip()
        if not uid:
            problems.append(AssetProblem("?", str(path), "no uid", f"line {number}"))
        elif label not in LABELS:
            detail = f"line {number}: {given!r}"
            problems.append(AssetProblem(uid, str(path), "unknown label", detail))
        elif uid in lines and (uid not in labels or LABELS[labels[uid]] != label):
            detail = f"line {number}: {label!r}, and another on line {lines[uid]}"
            problems.append(AssetProblem(uid, str(path), "two labels", detail))
            labels.pop(uid, None)  # neither is trusted
        else:
            labels[uid], lines[uid] = LABELS.index(label), number
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


def _voting_videos(folder: Path) -> list[Path]:
    """The videos of the views that vote, spread over the ring the object was rendered on (its
    highest view + 1); MissingView when one of them is not there (voting with other views
    would judge the object from another angle than the others without a word)."""
    views = object_views(folder)
    chosen = vote_views(views[-1] + 1)
    missing = [k for k in chosen if k not in views]
    if missing:
        raise MissingView(f"{folder}: no video of view(s) {missing}, which vote")
    return [folder / video_name(k) for k in chosen]


def predict(options: PredictOptions) -> tuple[list[dict], list[AssetProblem]]:
    videos = options.videos
    if not videos.is_dir():
        raise ConfigError(f"not a folder of rendered objects: {videos}")
    objects = object_folders(videos)
    if not objects:
        raise ConfigError(f"{videos}: no rendered objects (<uid>/{video_name(0)}) in it")
    funnel.refuse_other(options.out or videos, "curate 4d quality predict")
    model = Classifier.load(options.model)
    records: list[dict] = []
    dropped: list[AssetProblem] = []
    with progress_bar(disable=not options.progress) as bar:
        task = bar.add_task("quality", total=len(objects))
        for folder in objects:
            try:
                images = [first_frame(p) for p in _voting_videos(folder)]
            except MediaError as e:
                reason = "missing view" if isinstance(e, MissingView) else "unreadable video"
                dropped.append(AssetProblem(folder.name, str(folder), reason, str(e)))
                error = f"{reason}: {e}"
                records.append(
                    {"uid": folder.name, "label": None, "error": error, **render_digest(folder)}
                )
                bar.advance(task)
                continue
            probs = model.probabilities(images)
            per_view = [LABELS[i] for i in probs.argmax(axis=1)]
            label = vote(per_view, probs)
            records.append(
                {"uid": folder.name, "label": label, "views": per_view, **render_digest(folder)}
            )
            if label != KEEP:
                dropped.append(AssetProblem(folder.name, str(folder), label))
            bar.advance(task)
    out = options.out or videos
    write_jsonl(out / "quality.jsonl", records)
    kept = sum(r["label"] == KEEP for r in records)
    funnel.record(out, "quality", funnel.stage_count(len(objects), kept, dropped))
    return records, dropped
