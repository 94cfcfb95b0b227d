"""A run killed part-way (kill -9 or Ctrl-C) continues where it stopped when rerun."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TESTS, default_sigint, make_qa_dataset

MODEL = "python:support_models:LoggingGold"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_qa_dataset(tmp_path_factory.mktemp("resume"), n_objects=8)  # 40 questions


def _command(release: Path, out: Path, cache: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vidbench.cli",
        "--no-progress",
        "run",
        "4dbench-qa",
        "--data",
        str(release),
        "--model",
        MODEL,
        "--out",
        str(out),
        "--cache-dir",
        str(cache),
        "--concurrency",
        "2",
    ]


def _env(log: Path, delay: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),  # code under test
        "VIDBENCH_TEST_LOG": str(log),
        "VIDBENCH_TEST_DELAY": delay,
    }


def _sent(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _answered(out: Path) -> set[str]:
    with sqlite3.connect(out / "store.sqlite") as db:
        return {row[0] for row in db.execute("SELECT sample_id FROM responses")}


def _interrupt(release: Path, out: Path, cache: Path, log: Path, sig: int) -> int:
    proc = subprocess.Popen(
        _command(release, out, cache),
        preexec_fn=default_sigint,
        env=_env(log, "0.1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(_sent(log)) < 8 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    if sig == signal.SIGINT:
        assert "interrupted" in stderr and "run the same command again" in stderr
    return proc.returncode


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_interrupted_run_resumes_without_resending(release: Path, tmp_path: Path, sig) -> None:
    cache = tmp_path / "cache"
    out, log = tmp_path / "interrupted", tmp_path / "sent-interrupted.log"
    code = _interrupt(release, out, cache, log, sig)
    assert code == (-9 if sig == signal.SIGKILL else 130)
    answered_before = _answered(out)
    sent_before = len(_sent(log))
    assert 0 < len(answered_before) < 40

    subprocess.run(
        _command(release, out, cache), env=_env(log, "0"), check=True, capture_output=True
    )
    resent = _sent(log)[sent_before:]
    assert not set(resent) & answered_before, "a finished request was sent again"
    assert len(resent) == 40 - len(answered_before)

    fresh, fresh_log = tmp_path / "uninterrupted", tmp_path / "sent-fresh.log"
    subprocess.run(
        _command(release, fresh, cache), env=_env(fresh_log, "0"), check=True, capture_output=True
    )
    resumed = json.loads((out / "results.json").read_text())
    whole = json.loads((fresh / "results.json").read_text())
    for field in ("columns", "ci95", "n", "errors", "unparsed"):
        assert resumed[field] == whole[field]

    def records(path: Path) -> list[dict]:
        rows = [json.loads(line) for line in (path / "samples.jsonl").read_text().splitlines()]
        return sorted(rows, key=lambda r: r["id"])

    assert records(out) == records(fresh)
