"""Messages as API payloads, what the API backends share of their wire formats: images (the
task's encoded bytes as they are, or re-encoded as JPEG) and, for the APIs that take them apart
from the turns (Anthropic, Gemini), the system messages' text."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from vidbench.core.messages import ImagePart, Message


def image_bytes(part: ImagePart, jpeg_quality: int | None = None) -> tuple[bytes, str]:
    """(bytes, mime) to send: unchanged by default, re-encoded at `jpeg_quality` when given."""
    if jpeg_quality is None:
        return part.data, part.mime
    from PIL import Image

    buffer = io.BytesIO()
    image = Image.open(io.BytesIO(part.data)).convert("RGB")
    image.save(buffer, format="JPEG", quality=jpeg_quality)
    return buffer.getvalue(), "image/jpeg"


def image_base64(part: ImagePart, jpeg_quality: int | None = None) -> tuple[str, str]:
    """(base64, mime) to send: the image's own base64 (made once per image) by default,
    re-encoded at `jpeg_quality` when given."""
    if jpeg_quality is None:
        return part.base64, part.mime
    data, mime = image_bytes(part, jpeg_quality)
    return base64.b64encode(data).decode("ascii"), mime


def data_url(part: ImagePart, jpeg_quality: int | None = None) -> str:
    """A `data:image/jpeg;base64,...` URL (the OpenAI image_url form)."""
    data, mime = image_base64(part, jpeg_quality)
    return f"data:{mime};base64,{data}"


def split_system(messages: Sequence[Message], refusal: str) -> tuple[str | None, list[Message]]:
    """(the system messages' text joined by blank lines, or None; the other messages in order).

    No such API takes images in its system field: a system message with one raises
    ValueError(`refusal`)."""
    system: list[str] = []
    turns: list[Message] = []
    for message in messages:
        if message.role != "system":
            turns.append(message)
            continue
        if message.images:
            raise ValueError(refusal)
        system.append(message.text)
    return ("\n\n".join(system) or None), turns
