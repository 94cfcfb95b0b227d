"""The watchdog of a local Ray cluster (runner/ray/watchdog.py), without Ray: a driver starts it
and a "cluster" process carrying the mark; when the driver is killed the marked process goes at
once, and a process without the mark is left alone; when the driver says it stopped the cluster,
what is left goes after the grace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from vidbench.runner.ray import watchdog

DRIVER = """
import os, subprocess, sys, time
from vidbench.runner.ray import watchdog
guard = watchdog.start("test-mark")
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
os.environ[watchdog.CLUSTER_ENV] = "test-mark"
marked = subprocess.Popen(sleeper, start_new_session=True)
del os.environ[watchdog.CLUSTER_ENV]
other = subprocess.Popen(sleeper, start_new_session=True)
print(marked.pid, other.pid, guard.pid, flush=True)
if sys.argv[1] == "stop":
    time.sleep(0.5)
    watchdog.stop(guard)
    sys.exit(0)
time.sleep(600)
"""

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="the watchdog reads /proc")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


def _gone_within(pid: int, seconds: float) -> float | None:
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if not _alive(pid):
            return time.monotonic() - began
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("how", ["kill -9", "stop"])
def test_the_cluster_ends_with_its_driver_and_nothing_else_does(how: str) -> None:
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, "stop" if how == "stop" else "wait"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert driver.stdout is not None
    marked, other, guard = map(int, driver.stdout.readline().split())
    try:
        if how == "kill -9":
            driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        limit = 3.0 if how == "kill -9" else watchdog.GRACE_S + 3.0
        took = _gone_within(marked, limit)
        assert took is not None, f"the marked process outlived its driver by {limit} s ({how})"
        assert _alive(other)  # not the cluster's: left alone
        assert _gone_within(guard, watchdog.SWEEP_S) is not None  # and the watchdog ends
    finally:
        for pid in (marked, other):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
