"""One frame as a model receives it, with where it came from."""

from __future__ import annotations

from dataclasses import dataclass

from vidbench.core.messages import ImagePart


@dataclass(frozen=True)
class Frame:
    view: int
    index: int  # frame index in the video (presentation order)
    time_s: float  # seconds from the start of the video (or of the cut window)
    image: ImagePart
