"""The `hf:` backend when things go wrong on the device side: Ctrl-C while the weights load,
the GPU out of memory in a batch."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TESTS, default_sigint, make_qa_dataset
from tiny_models import tiny_qwen2_vl


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


def _run(data: Path, out: Path, env: dict[str, str], **popen) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "vidbench.cli", "--no-progress", "run", "4dbench-qa"]
    command += ["--data", str(data), "--model", "python:support_models:SlowLoadingHF"]
    command += ["--out", str(out), "--cache-dir", str(out / "frames"), "--max-tokens", "2"]
    return subprocess.Popen(command, env=env, text=True, stderr=subprocess.PIPE, **popen)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_interrupt_while_the_weights_load_ends_at_once(
    tiny_qwen: Path, tmp_path: Path, sig: int, code: int, said: str
) -> None:
    """A load that would take a minute is not waited for: the command ends within 2 s, as any
    interrupted run does, without a crash at shutdown; the rerun answers every question."""
    data = make_qa_dataset(tmp_path / "data", n_objects=1, frames=12)
    log, out = tmp_path / "log", tmp_path / "out"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
        "VIDBENCH_TEST_HF": str(tiny_qwen),
        "VIDBENCH_TEST_LOG": str(log),
        "VIDBENCH_TEST_DELAY": "60",
    }
    proc = _run(data, out, env, preexec_fn=default_sigint, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (log.exists() and "LOADING" in log.read_text()) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.02)
    proc.send_signal(sig)
    sent = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - sent < 2, "the command waited for the load"
    assert proc.returncode == code, stderr
    assert said in stderr and "run the same command again" in stderr
    assert "Traceback" not in stderr and "Fatal" not in stderr
    if sig == signal.SIGTERM:
        return  # the same ending as Ctrl-C's: the rerun is checked once
    rerun = _run(data, out, {**env, "VIDBENCH_TEST_DELAY": "0"}, stdout=subprocess.DEVNULL)
    _, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 5
