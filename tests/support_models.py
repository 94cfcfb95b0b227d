"""Model backends for tests, loaded through the `python:` spec (real runner code paths)."""

from __future__ import annotations

import asyncio
import os
import time
import zlib
from collections.abc import Sequence
from typing import Any

from vidbench.core.messages import ImagePart, TextPart
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.models.hf_backend import HFModel
from vidbench.models.hf_backend import build as build_hf
from vidbench.models.registry import ModelOptions


class LoggingGold(Model):
    """Answers "(A)" after a delay and appends every request it is sent to $VIDBENCH_TEST_LOG."""

    spec = "python:support_models:LoggingGold"

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        log = os.environ["VIDBENCH_TEST_LOG"]
        with open(log, "a") as f:
            for r in requests:
                f.write(r.sample_id + "\n")
            f.flush()
            os.fsync(f.fileno())
        await asyncio.sleep(float(os.environ.get("VIDBENCH_TEST_DELAY", "0.05")))
        return [Response(r.key, f"The answer is ({_letter(r.sample_id)})") for r in requests]


def _letter(sample_id: str) -> str:
    return "ABCD"[zlib.crc32(sample_id.encode()) % 4]


class CostlyStart(LoggingGold):
    """Like LoggingGold, with a costly start (as loading weights is): it logs "START"."""

    spec = "python:support_models:CostlyStart"
    start_when_needed = True

    async def start(self) -> None:
        with open(os.environ["VIDBENCH_TEST_LOG"], "a") as f:
            f.write("START\n")


class Timed(Model):
    """Answers "(A)" at once, without frames, and keeps a local model's timing as hf: does:
    10 ms of device time and one batch per call (the Ray tests' workers sum them)."""

    spec = "python:support_models:Timed"
    needs_frames = False

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += 1
        return [Response(r.key, "(A)") for r in requests]

    def timing(self) -> dict[str, float | int]:
        return {"prepare_s": 0.0, "device_s": 0.01 * self.calls, "batches": self.calls}


class FailsOnMark(Model):
    """Answers "(A)", and fails every request whose text holds "[fail]" (a server error)."""

    spec = "python:support_models:FailsOnMark"

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        def text(request: Request) -> str:
            parts = (part for message in request.messages for part in message.content)
            return " ".join(part.text for part in parts if isinstance(part, TextPart))

        return [
            Response(r.key, None, error="HTTP 500: failed on purpose", status="error")
            if "[fail]" in text(r)
            else Response(r.key, "(A)")
            for r in requests
        ]


class Blank(Model):
    """Replies with white space only, as a local model may (an API backend calls that empty)."""

    spec = "python:support_models:Blank"

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(r.key, " \n") for r in requests]


class SeesPixels(Model):
    """Answers a letter drawn from the pixels it is shown (the first image's bytes), so an
    edited video gets other answers; appends every request's sample id to $VIDBENCH_TEST_LOG."""

    spec = "python:support_models:SeesPixels"

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        with open(os.environ["VIDBENCH_TEST_LOG"], "a") as f:
            f.write("".join(r.sample_id + "\n" for r in requests))
        return [Response(r.key, f"The answer is ({_seen(r)})") for r in requests]


def _seen(request: Request) -> str:
    images = [p for m in request.messages for p in m.content if isinstance(p, ImagePart)]
    return "ABCD"[zlib.crc32(images[0].data) % 4]


class SlowHF(HFModel):
    """The `hf:` backend on the tiny checkpoint in $VIDBENCH_TEST_HF (CPU, float32), whose step
    $VIDBENCH_TEST_SLOW ("load": the weights' load, "batch": each device batch) takes
    $VIDBENCH_TEST_DELAY seconds more, as a large model's do; it appends the step's name to
    $VIDBENCH_TEST_LOG when the step starts."""

    def __init__(self) -> None:
        options = ModelOptions(extra={"device": "cpu", "dtype": "float32"})
        built = build_hf(os.environ["VIDBENCH_TEST_HF"], options)
        super().__init__(built.spec, built.source, built.settings, built.checkpoint)

    def _slow(self, step: str) -> None:
        if os.environ.get("VIDBENCH_TEST_SLOW") == step:
            with open(os.environ["VIDBENCH_TEST_LOG"], "a") as f:
                f.write(f"{step}\n")
            time.sleep(float(os.environ.get("VIDBENCH_TEST_DELAY", "0")))

    def load(self) -> Any:
        if self._loaded is None:
            self._slow("load")
        return super().load()

    def _generate_batch(self, prepared: Any) -> list[Response]:
        self._slow("batch")
        return super()._generate_batch(prepared)
