"""After sampling: temporal shuffling and tiling frames into one grid image."""

from __future__ import annotations

import random
from collections.abc import Sequence

from PIL import Image

from vidbench.core.messages import ImagePart
from vidbench.media.frame import Frame
from vidbench.media.images import MIME, decode_image, encode_image_pil
from vidbench.media.spec import FrameSpec, parse_grid


def shuffle(frames: Sequence[Frame], seed: int) -> list[Frame]:
    """The frames in a seeded random order (the same seed gives the same order)."""
    order = list(frames)
    random.Random(seed).shuffle(order)
    return order


def grid_image(frames: Sequence[Frame], spec: FrameSpec) -> Frame:
    """One image: frames pasted row by row into a rows x cols grid of equal cells (the first
    frame's size); empty cells and square padding are black. Its label lists the frames; its
    `tiles` are the frames themselves."""
    assert spec.grid is not None
    rows, cols, square = parse_grid(spec.grid)
    images = [decode_image(f.image.data) for f in frames]
    cell_w, cell_h = images[0].size
    width, height = cols * cell_w, rows * cell_h
    side = max(width, height) if square else 0
    canvas = Image.new("RGB", (side or width, side or height), (0, 0, 0))
    left, top = ((side - width) // 2, (side - height) // 2) if square else (0, 0)
    for i, image in enumerate(images):
        r, c = divmod(i, cols)
        if image.size != (cell_w, cell_h):
            image = image.resize((cell_w, cell_h))
        canvas.paste(image, (left + c * cell_w, top + r * cell_h))
    data = encode_image_pil(canvas, spec.image_format, spec.jpeg_quality)
    label = "grid " + spec.grid + ": " + "; ".join(f.image.label for f in frames)
    first = frames[0]
    return Frame(
        first.view,
        first.index,
        first.time_s,
        ImagePart(data, MIME[spec.image_format], label, _sources(frames)),
        tiles=tuple(frames),
    )


def _sources(frames: Sequence[Frame]) -> str:
    """The contents a grid's frames come from (their videos' digests), each once, in order."""
    return " ".join(dict.fromkeys(f.image.source for f in frames if f.image.source))


def arrange(frames: list[Frame], spec: FrameSpec) -> list[Frame]:
    if spec.shuffle_seed is not None:
        frames = shuffle(frames, spec.shuffle_seed)
    if spec.grid is not None:
        frames = [grid_image(frames, spec)]
    return frames
