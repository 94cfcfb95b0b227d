"""A deterministic model for the probe that looks at the frames: it counts blobs of a colour.

    vidbench run 4dbench-qa --data DIR \\
        --model python:vidbench.benchmarks.fourd.probe.model:ColourCounter --out R

For "How many <colour> <shapes> ..." it finds the colour's pixels in every image it is shown,
counts their connected blobs (scipy.ndimage) and answers the option nearest to the largest count
seen in one image. It ignores shape, so a part of the counted colour on another shape (a
look-alike) is counted too; two counted parts that touch in an image are one blob; a part hidden
behind an occluder in one view is counted only if another view shows it. Its accuracy therefore
depends on the knobs for reasons one can name, which is what a probe's baseline is for. Every
other question gets a seeded random letter (as the `random` baseline picks it).

Pixels are classed by colour name: the white background (bright and unsaturated), black
(unsaturated and dark), else the palette colour (synthetic/scene.py COLOURS) nearest in
chromaticity (r, g, b over their sum, so that shading does not change it), with brown told from
orange by brightness.
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Sequence

import numpy as np
from PIL import Image

from vidbench.benchmarks.fourd.synthetic.scene import COLOURS
from vidbench.core.files import Json
from vidbench.core.messages import ImagePart
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model

QUESTION = re.compile(r"How many (" + "|".join(COLOURS) + r") (\w+) are there")
OPTION = re.compile(r"\(([A-D])\) (\d+)")
MIN_AREA = 0.001  # of the image: smaller blobs are edges and noise
BACKGROUND_VALUE, GREY_SATURATION = 0.85, 0.22
CHROMATIC = [c for c in COLOURS if c != "black"]
_CHROMA = np.array([np.asarray(COLOURS[c], float) / sum(COLOURS[c]) for c in CHROMATIC])


def colour_names(rgb: np.ndarray) -> np.ndarray:
    """Per pixel: -1 background, else an index into COLOURS' order."""
    data = rgb.astype(float)
    high, low = data.max(axis=2), data.min(axis=2)
    value = high / 255.0
    saturation = np.where(high > 0, (high - low) / np.maximum(high, 1.0), 0.0)
    chroma = data / np.maximum(data.sum(axis=2, keepdims=True), 1.0)
    nearest = np.argmin(((chroma[..., None, :] - _CHROMA) ** 2).sum(axis=3), axis=2)
    names = list(COLOURS)
    index = np.array([names.index(c) for c in CHROMATIC])[nearest]
    orange, brown = names.index("orange"), names.index("brown")
    warm = np.isin(index, (orange, brown))
    index = np.where(warm, np.where(value < 0.62, brown, orange), index)
    grey = saturation < GREY_SATURATION
    index = np.where(grey, names.index("black"), index)
    return np.where(grey & (value > BACKGROUND_VALUE), -1, index)


def count_blobs(rgb: np.ndarray, colour: str) -> int:
    """Connected blobs of ``colour`` in one image (thin edges opened away first)."""
    from scipy import ndimage

    mask = colour_names(rgb) == list(COLOURS).index(colour)
    mask = ndimage.binary_opening(mask, structure=np.ones((2, 2), bool))
    labels, found = ndimage.label(mask)
    if not found:
        return 0
    areas = np.bincount(labels.ravel())[1:]
    return int((areas >= MIN_AREA * mask.size).sum())


def answer(images: Sequence[np.ndarray], text: str) -> str | None:
    """The letter of the option nearest to the largest blob count in one image; None when the
    text asks no colour count."""
    question = QUESTION.search(text)
    options = OPTION.findall(text)
    if question is None or not options:
        return None
    seen = max((count_blobs(image, question.group(1)) for image in images), default=0)
    letter, _ = min(options, key=lambda o: (abs(int(o[1]) - seen), o[0]))
    return letter


class ColourCounter(Model):
    """Counts blobs of the asked colour (see the module docstring)."""

    spec = "python:vidbench.benchmarks.fourd.probe.model:ColourCounter"

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec, "version": 1}

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self._answer(r) for r in requests]

    def _answer(self, request: Request) -> Response:
        text = "".join(m.text for m in request.messages)
        images = [
            np.asarray(Image.open(io.BytesIO(part.data)).convert("RGB"))
            for m in request.messages
            for part in m.content
            if isinstance(part, ImagePart)
        ]
        letter = answer(images, text)
        if letter is None:
            letter = random.Random(f"0:{request.sample_id}").choice(request.choices or "ABCD")
        return Response(request.key, f"({letter})")
