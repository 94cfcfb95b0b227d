"""Pieces of the 4D-Bench prompts that depend on the FrameSpec (supplement Figs. IV, VI)."""

from __future__ import annotations

from collections.abc import Sequence

from vidbench.core.messages import Part, TextPart
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def number_word(n: int) -> str:
    """'six' for 6, as the official prompt spells the frames per view; digits from 10 on."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def frames_sentence(spec: FrameSpec, noun: str = "frames") -> str:
    """How the images are laid out, e.g. "I provide you 18 frames with every six images ...".

    View-first is the official wording with the counts of the spec. Time-first has no official
    prompt (README.md); vidbench words it so the model is told the order it gets. The QA
    prompt (Fig. VI) says "18 frames with", the caption prompt (Fig. IV) "18 images, with":
    `noun` is "frames" or "images,".
    """
    if spec.order == "view-first":
        return (
            f"I provide you {spec.n_images} {noun} with every {number_word(spec.frames)} images "
            "uniformly sampled from one video, each video captured from a different angle"
        )
    return (
        f"I provide you {spec.n_images} {noun.rstrip(',')} from {number_word(len(spec.views))} "
        "videos, each video captured from a different angle, in time order: at each of "
        f"{number_word(spec.frames)} uniformly sampled moments, one frame from every video"
    )


TIMESTAMPS_SENTENCE = " Each image is preceded by the video (angle) it comes from and its time."


def image_parts(frames: Sequence[Frame], spec: FrameSpec) -> list[Part]:
    """The images in spec order, each preceded by a view/time label when the spec asks for it."""
    parts: list[Part] = []
    view_number = {view: i + 1 for i, view in enumerate(spec.views)}
    for frame in frames:
        if spec.timestamps:
            parts.append(TextPart(f"[video {view_number[frame.view]}, {frame.time_s:.2f}s] "))
        parts.append(frame.image)
    return parts
