"""One frame as a model receives it, with where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired

from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from vidbench.core.messages import ImagePart


class FrameRecord(TypedDict):
    """Where an image came from, as the store and samples.jsonl keep it (no pixels)."""

    view: int
    index: int
    time_s: float
    tiles: NotRequired[list[FrameRecord]]  # a grid image: its frames, in grid order


@dataclass(frozen=True)
class Frame:
    view: int
    index: int  # frame index in the video (presentation order)
    time_s: float  # seconds from the start of the video (or of the cut window)
    image: ImagePart
    tiles: tuple[Frame, ...] = ()  # for a grid image: the frames it is made of, in grid order

    def describe(self) -> FrameRecord:
        """Where the image came from, for the store and samples.jsonl (no pixels)."""
        record: FrameRecord = {"view": self.view, "index": self.index, "time_s": self.time_s}
        if self.tiles:
            record["tiles"] = [tile.describe() for tile in self.tiles]
        return record
