"""One frame as a model receives it, with where it came from."""

from __future__ import annotations

from collections.abc import Sequence
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
    # the content of the video it was taken from (ImagePart.source: its digest; a grid's, its
    # tiles' videos' digests, space-separated), so a report knows a video edited since
    source: NotRequired[str]


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
        if self.image.source:
            record["source"] = self.image.source
        return record


def video_sources(records: Sequence[FrameRecord]) -> dict[int, str]:
    """The digest of the video each view's frames (as the store keeps them) were taken from
    (a grid's, from its tiles); none for records made before they carried one."""
    found: dict[int, str] = {}
    for record in records:
        if "tiles" in record:
            found |= video_sources(record["tiles"])
        elif "source" in record:
            found[record["view"]] = record["source"]
    return found
