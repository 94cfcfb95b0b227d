"""Helpers for the API backend tests: requests with images, backends aimed at a ChatServer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request, Response
from vidbench.media.images import encode_image
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model
from vidbench.testing import ChatServer

BACKENDS = ("openai", "anthropic", "gemini")
FAKE_KEYS = {"ANTHROPIC_API_KEY": "sk-test-anthropic-0123", "GEMINI_API_KEY": "sk-test-gemini-0123"}


def image(shade: int, label: str = "") -> ImagePart:
    pixels = np.full((8, 8, 3), shade, np.uint8)
    pixels[2:5, 2:5] = 255 - shade
    return ImagePart(encode_image(pixels), label=label or f"image {shade}")


def request(i: int, text: str | None = None, generation: GenerationConfig | None = None) -> Request:
    """A system prompt, then a user turn: image, text, image, text."""
    messages = (
        Message("system", (TextPart("Answer with a letter."),)),
        Message(
            "user",
            (
                image(10 + i),
                TextPart(text or f"Question {i}: which one?"),
                image(200 - i),
                TextPart(" (A) or (B)"),
            ),
        ),
    )
    return Request(f"key{i}", f"sample{i}", messages, generation or GenerationConfig())


def backend(
    kind: str, server: ChatServer, concurrency: int = 16, **options: str | float | int
) -> Model:
    """A model of `kind` talking to `server`, with fast retries unless told otherwise."""
    extra = {"backoff": "0.01", "timeout": "5"} | {k: str(v) for k, v in options.items()}
    if kind == "openai":
        spec = f"openai-compat:{server.base_url}#fake-model"
    else:
        extra["base_url"] = server.root_url
        spec = {"anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}[kind]
    return load_model(spec, ModelOptions(concurrency=concurrency, extra=extra))


def ask(model: Model, requests: Sequence[Request]) -> list[Response]:
    """start(), generate() and aclose() in one event loop, as the runner does."""

    async def go() -> list[Response]:
        try:
            await model.start()
            return await model.generate(requests)
        finally:
            await model.aclose()

    return asyncio.run(go())
