"""The Ray tests count and kill only their own cluster's workers: a process titled like a Ray
worker that is not one of this test process's clusters' (another Ray on the machine) is left
alone."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from ray_support import CLUSTER_MARK, worker_pids


def _titled_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A process whose command line reads like a Ray InferWorker's (bash's exec -a)."""
    worker = subprocess.Popen(["bash", "-c", 'exec -a "ray::InferWorker.run" sleep 60'], env=env)
    title = Path(f"/proc/{worker.pid}/cmdline")
    deadline = time.monotonic() + 10
    while not title.read_bytes().startswith(b"ray::") and time.monotonic() < deadline:
        time.sleep(0.01)  # bash has not exec'd yet
    return worker


def test_only_this_test_processs_workers_are_counted() -> None:
    name, _, value = CLUSTER_MARK.partition("=")
    others = _titled_worker({**os.environ, name: "another-test-run"})
    ours = _titled_worker({**os.environ, name: value})
    try:
        assert worker_pids() == [ours.pid]
    finally:
        for process in (others, ours):
            process.kill()
            process.wait()
