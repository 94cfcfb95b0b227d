"""Encoding frames as the image bytes a model receives."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

MIME = {"jpeg": "image/jpeg", "png": "image/png"}


def encode_image(pixels: np.ndarray, image_format: str = "jpeg", jpeg_quality: int = 95) -> bytes:
    """RGB uint8 HxWx3 -> JPEG or PNG bytes."""
    return encode_image_pil(Image.fromarray(pixels, "RGB"), image_format, jpeg_quality)


def encode_image_pil(
    image: Image.Image, image_format: str = "jpeg", jpeg_quality: int = 95
) -> bytes:
    """PIL image -> JPEG or PNG bytes."""
    buffer = io.BytesIO()
    if image_format == "jpeg":
        image.save(buffer, format="JPEG", quality=jpeg_quality)
    else:
        image.save(buffer, format="PNG")
    return buffer.getvalue()


def decode_image(data: bytes) -> Image.Image:
    """Image bytes -> RGB PIL image (for local models and reports)."""
    return Image.open(io.BytesIO(data)).convert("RGB")
