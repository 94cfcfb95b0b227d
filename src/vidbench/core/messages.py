"""The one message protocol: chat messages whose content is an ordered list of text and images.

Tasks build these; model backends convert them to their own wire format.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cached_property
from typing import Literal


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """An encoded image (JPEG or PNG bytes), exactly what an API model would receive.

    `label` says where the image came from (e.g. "view 8, frame 12"); it is provenance for reports,
    never sent to the model (a task that wants the model to see it adds a TextPart).
    `source` identifies the content it was taken from (the video file's digest: a frame of
    "view 8, frame 12" of an edited video is another image), so store keys change with it.
    """

    data: bytes
    mime: str = "image/jpeg"
    label: str = ""
    source: str = ""

    def __repr__(self) -> str:  # keep logs readable: never dump the bytes
        return f"ImagePart({self.mime}, {len(self.data)} bytes, {self.label!r})"

    @cached_property
    def base64(self) -> str:
        """`data` in base64, as APIs take images: made once per image however many requests
        show it (the questions of one clip share its frames)."""
        return base64.b64encode(self.data).decode("ascii")


Part = TextPart | ImagePart
Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: tuple[Part, ...]

    @property
    def text(self) -> str:
        """All text parts joined, in order (what a text-only model sees)."""
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def images(self) -> tuple[ImagePart, ...]:
        return tuple(p for p in self.content if isinstance(p, ImagePart))


def user(*parts: Part | str) -> Message:
    """A user message from parts; plain strings become text parts."""
    return Message("user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))
