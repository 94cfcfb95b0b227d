"""A vidbench model around a checkpoint with its own chat API, for rows no backend runs.

The 4D-Bench paper's InternVL2 rows ran `OpenGVLab/InternVL2-8B` through the code that
checkpoint ships (`trust_remote_code=True`) and its own `model.chat(tokenizer, pixel_values,
question, generation_config, num_patches_list=...)`: no transformers processor, no `generate`
on processor outputs, so `hf:` cannot drive it. This class does, the way the paper's script did
(4D-Bench repository, `InternVL2_8b_exp.py`): every frame resized to one 448 x 448 tile,
normalised with the ImageNet mean and std, and the question prefixed with `Frame{i}: <image>`
per frame. Models with other chat APIs (MiniGPT4-Video, VideoChat2, ...) follow the same shape:
frames and text in, the model's own call, one Response per request.

    PYTHONPATH=docs/examples OWN_CHAT_CHECKPOINT=OpenGVLab/InternVL2-8B \\
        vidbench run 4dbench-qa --data DATA --model python:own_chat_model:OwnChatModel --out R

`OWN_CHAT_CHECKPOINT` names the checkpoint (a hub id or a directory), `OWN_CHAT_DEVICE` the
device (default: cuda if there is one). Loading it runs the checkpoint's own code: read it first.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from vidbench.core.errors import ConfigError
from vidbench.core.messages import ImagePart
from vidbench.core.requests import Request, Response
from vidbench.media.images import decode_image
from vidbench.models.base import Model

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
TILE = 448


class OwnChatModel(Model):
    """One request at a time through the checkpoint's own `chat()`."""

    start_when_needed = True  # loading weights is costly: only when a request needs them

    def __init__(self) -> None:
        self.checkpoint = os.environ.get("OWN_CHAT_CHECKPOINT", "OpenGVLab/InternVL2-8B")
        self.spec = f"python:own_chat_model:OwnChatModel ({self.checkpoint})"
        self.device = os.environ.get("OWN_CHAT_DEVICE", "")
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """Everything besides the request that decides an answer: it keys the store."""
        return {
            "spec": "python:own_chat_model:OwnChatModel",
            "checkpoint": self.checkpoint,
            "frames": f"Frame{{i}}: <image>, one {TILE} px tile per frame",
            "trust_remote_code": True,
        }

    def load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModel, AutoTokenizer

        with self._lock:
            if self._loaded is None:
                device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
                try:
                    model = AutoModel.from_pretrained(self.checkpoint, trust_remote_code=True)
                    tokenizer = AutoTokenizer.from_pretrained(
                        self.checkpoint, trust_remote_code=True
                    )
                except Exception as e:  # a checkpoint that does not load stops the run
                    raise ConfigError(f"{self.spec}: cannot load it ({e})") from e
                self._loaded = (model.to(device).eval(), tokenizer)
            return self._loaded

    async def start(self) -> None:
        await asyncio.to_thread(self.load)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [await asyncio.to_thread(self._answer, request) for request in requests]

    def _answer(self, request: Request) -> Response:
        import torch

        model, tokenizer = self.load()
        images = [p for m in request.messages for p in m.content if isinstance(p, ImagePart)]
        text = "".join(m.text for m in request.messages)
        prefix = "".join(f"Frame{i + 1}: <image>\n" for i in range(len(images)))
        g = request.generation
        settings: dict[str, Any] = {"max_new_tokens": g.max_tokens, "do_sample": g.temperature > 0}
        if g.temperature > 0:
            settings.update(temperature=g.temperature, top_p=g.top_p)
            if g.seed is not None:
                torch.manual_seed(g.seed)
        try:
            pixels = torch.from_numpy(np.stack([tile(p) for p in images]))
            reply = model.chat(
                tokenizer, pixels, prefix + text, settings, num_patches_list=[1] * len(images)
            )
        except Exception as e:  # one failed request never stops the run: record it
            return Response(request.key, None, error=f"{type(e).__name__}: {e}")
        if not reply.strip():
            return Response(request.key, None, error="the model returned no text", status="empty")
        return Response(request.key, reply.strip())


def tile(image: ImagePart) -> np.ndarray:
    """One frame as InternVL2's single tile: 448 x 448 bicubic, ImageNet-normalised, CHW."""
    from PIL import Image

    pixels = decode_image(image.data).resize((TILE, TILE), Image.Resampling.BICUBIC)
    array = (np.asarray(pixels, dtype=np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    return array.transpose(2, 0, 1)
