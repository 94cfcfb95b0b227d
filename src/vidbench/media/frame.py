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
    tiles: tuple[Frame, ...] = ()  # for a grid image: the frames it is made of, in grid order

    def describe(self) -> dict[str, object]:
        """Where the image came from, for the store and samples.jsonl (no pixels)."""
        record: dict[str, object] = {"view": self.view, "index": self.index, "time_s": self.time_s}
        if self.tiles:
            record["tiles"] = [tile.describe() for tile in self.tiles]
        return record
