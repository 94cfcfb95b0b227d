"""The visual quality classifier (4D-Bench paper, section 3.2 "Object visual quality assessment"
and supplement B.2): a CLIP visual encoder with a linear head, three classes (high quality,
textureless, low overall quality). Trained on the first frame of each object's first view;
an object's label is the majority vote over the first frames of 8 views.

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

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vidbench.core.errors import ConfigError
from vidbench.extras import require

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
