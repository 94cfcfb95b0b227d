"""Images as API payloads: the task's encoded bytes as they are, or re-encoded as JPEG."""

from __future__ import annotations

import base64
import io

from vidbench.core.messages import ImagePart


def image_bytes(part: ImagePart, jpeg_quality: int | None = None) -> tuple[bytes, str]:
    """(bytes, mime) to send: unchanged by default, re-encoded at `jpeg_quality` when given."""
    if jpeg_quality is None:
        return part.data, part.mime
    from PIL import Image

    buffer = io.BytesIO()
    image = Image.open(io.BytesIO(part.data)).convert("RGB")
    image.save(buffer, format="JPEG", quality=jpeg_quality)
    return buffer.getvalue(), "image/jpeg"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(part: ImagePart, jpeg_quality: int | None = None) -> str:
    """A `data:image/jpeg;base64,...` URL (the OpenAI image_url form)."""
    data, mime = image_bytes(part, jpeg_quality)
    return f"data:{mime};base64,{b64(data)}"
