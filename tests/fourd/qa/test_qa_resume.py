"""`curate 4d qa` stopped part-way (Ctrl-C or kill -9) continues where it stopped: the rerun
sends only what had no stored reply, and the output equals an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from qa_support import Oracle, curate_args, write_objects

from conftest import TESTS, default_sigint
from vidbench.cli import main
from vidbench.testing import ChatServer

ALL_CALLS = 12 + 9 + 16  # generate (with two re-asks), validate, blind x 2


def _args(data: Path, out: Path, url: str, cache: Path) -> list[str]:
    blind2 = f"openai-compat:{url}#blind2"
    return [*curate_args(data, out, url, cache, blind2), "--concurrency", "2"]


def _stored(out: Path) -> int:
    with sqlite3.connect(out / "store.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_interrupted_curation_resumes(tmp_path: Path, shared_server: ChatServer, sig) -> None:
    data, cache = write_objects(tmp_path / "data"), tmp_path / "frames"
    oracle = Oracle()
    shared_server.reset(reply=oracle, latency=0.1)
    out = tmp_path / "interrupted"
    args = _args(data, out, shared_server.base_url, cache)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vidbench.cli", *args],
        preexec_fn=default_sigint,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(shared_server.requests) < 16 and time.monotonic() < deadline:
        time.sleep(0.02)  # past generation, into validation
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == (130 if sig == signal.SIGINT else -9), stderr
    stored = _stored(out)
    assert 12 <= stored < ALL_CALLS

    shared_server.reset(reply=oracle)
    assert main(args) == 0
    assert len(shared_server.requests) == ALL_CALLS - stored  # nothing stored is asked again
    assert _stored(out) == ALL_CALLS

    fresh = tmp_path / "fresh"
    assert main(_args(data, fresh, shared_server.base_url, cache)) == 0
    for name in ("4d_qa.json", "review_queue.jsonl", "candidates.jsonl"):
        assert (out / name).read_text() == (fresh / name).read_text(), name
