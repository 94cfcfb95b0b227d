"""The `hf:` backend when things go wrong on the device side: Ctrl-C while the weights load,
the GPU out of memory in a batch."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest
import torch
from transformers import Qwen2VLForConditionalGeneration

from conftest import TESTS, default_sigint, make_qa_dataset
from tiny_models import tiny_qwen2_vl
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import GenerationConfig, Request
from vidbench.models.hf_backend import HFModel
from vidbench.models.hf_runtime import LoadedModel
from vidbench.models.registry import ModelOptions, load_model


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


def _run(data: Path, out: Path, env: dict[str, str], **popen) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "vidbench.cli", "--no-progress", "run", "4dbench-qa"]
    command += ["--data", str(data), "--model", "python:support_models:SlowHF"]
    command += ["--out", str(out), "--cache-dir", str(out / "frames"), "--max-tokens", "2"]
    return subprocess.Popen(command, env=env, text=True, stderr=subprocess.PIPE, **popen)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step", "sig", "code", "said"),
    [
        ("load", signal.SIGINT, 130, "interrupted"),
        ("load", signal.SIGTERM, 143, "terminated"),
        ("batch", signal.SIGINT, 130, "interrupted"),
    ],
    ids=["ctrl-c-loading", "sigterm-loading", "ctrl-c-generating"],
)
def test_interrupt_while_the_weights_load_or_a_batch_runs_ends_at_once(
    tiny_qwen: Path, tmp_path: Path, step: str, sig: int, code: int, said: str
) -> None:
    """A load or a batch that would take a minute is not waited for: the command ends within
    2 s, as any interrupted run does, without a crash at shutdown; the rerun answers every
    question."""
    data = make_qa_dataset(tmp_path / "data", n_objects=1, frames=12)
    log, out = tmp_path / "log", tmp_path / "out"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
        "VIDBENCH_TEST_HF": str(tiny_qwen),
        "VIDBENCH_TEST_LOG": str(log),
        "VIDBENCH_TEST_SLOW": step,
        "VIDBENCH_TEST_DELAY": "60",
    }
    proc = _run(data, out, env, preexec_fn=default_sigint, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (log.exists() and step in log.read_text()) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.02)
    proc.send_signal(sig)
    sent = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - sent < 2, f"the command waited for the {step}"
    assert proc.returncode == code, stderr
    assert said in stderr and "run the same command again" in stderr
    assert "Traceback" not in stderr and "Fatal" not in stderr
    if sig == signal.SIGTERM or step == "batch":
        return  # the same ending: the rerun is checked once
    rerun = _run(data, out, {**env, "VIDBENCH_TEST_DELAY": "0"}, stdout=subprocess.DEVNULL)
    _, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 5


class OutOfMemoryAbove(Qwen2VLForConditionalGeneration):
    """The tiny Qwen2-VL on a device whose memory holds `fits` prompts at once: a larger batch
    raises torch's OutOfMemoryError, as CUDA does; the batch sizes it generated are `ran`."""

    fits = 2
    ran: list[int]

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        rows = kwargs["input_ids"].shape[0]
        if rows > self.fits:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        self.ran.append(rows)
        return super().generate(*args, **kwargs)


class SmallDevice(HFModel):
    """The `hf:` backend with OutOfMemoryAbove as its model (the rest as loaded)."""

    def __init__(self, model: HFModel, fits: int) -> None:
        super().__init__(model.spec, model.source, model.settings, model.checkpoint)
        self.fits = fits
        self.ran: list[int] = []

    def load(self) -> LoadedModel:
        loaded = super().load()
        if not isinstance(loaded.model, OutOfMemoryAbove):  # the weights as loaded, made one
            loaded.model.__class__ = OutOfMemoryAbove
            loaded.model.fits, loaded.model.ran = self.fits, self.ran
        return loaded


def _questions(n: int) -> list[Request]:
    settings = GenerationConfig(max_tokens=3)
    return [
        Request(f"k{i}", f"s{i}", (Message("user", (TextPart("Why?" * (i + 1)),)),), settings)
        for i in range(n)
    ]


def test_out_of_memory_asks_the_batch_again_in_halves(tiny_qwen: Path) -> None:
    """A batch of 5 on a device that holds 2: asked again as 2 + 3, the 3 as 1 + 2; every answer
    is the one a batch of 1 gives, none an error a rerun would make again."""
    options = ModelOptions(extra={"device": "cpu", "dtype": "float32", "batch_size": "5"})
    model = SmallDevice(cast(HFModel, load_model(f"hf:{tiny_qwen}", options)), fits=2)
    answers = asyncio.run(model.generate(_questions(5)))
    assert model.ran == [2, 1, 2]
    alone = load_model(f"hf:{tiny_qwen}", ModelOptions(extra={"device": "cpu"}))
    expected = [asyncio.run(alone.generate([r]))[0] for r in _questions(5)]
    assert [a.status for a in answers] == ["ok"] * 5
    assert [a.text for a in answers] == [e.text for e in expected]


def test_a_request_too_large_alone_is_rejected_with_what_to_change(tiny_qwen: Path) -> None:
    options = ModelOptions(extra={"device": "cpu", "dtype": "float32", "batch_size": "2"})
    model = SmallDevice(cast(HFModel, load_model(f"hf:{tiny_qwen}", options)), fits=0)
    answers = asyncio.run(model.generate(_questions(2)))
    assert [a.status for a in answers] == ["rejected"] * 2
    assert all("ran out of memory for this request alone" in (a.error or "") for a in answers)
    assert all("frames" in (a.change_first or "") for a in answers)
    assert all("--max-tokens" in (a.change_first or "") for a in answers)
    assert all("dtype" in (a.change_first or "") for a in answers)
