"""Ends every process of a local Ray cluster with the `vidbench run --ray` process that started
it, however that process ends.

`ray.init()` starts a cluster's processes (GCS, raylet, agents, then the workers) under the
driver. When the driver is killed (`kill -9`), the kernel ends the GCS and the raylet with it,
but nothing is left to stop the workers at once: they go on calling the model until they notice,
and Ray's dashboard and runtime-env agents linger for a minute or more (they report the raylet's
death to the GCS, which is gone, and wait for its timeout). This watchdog is started beside the
cluster (`start`), in a session of its own, with a pipe from the driver on its standard input:

- the pipe closes without a word (the driver died): every process of the cluster is killed at
  once;
- the driver writes `STOPPED` and closes the pipe after `ray.shutdown()`: the cluster's
  processes get GRACE_S seconds to end on their own, then what is left is killed.

A process is the cluster's when its environment carries the cluster's mark (CLUSTER_ENV, given
to the processes `ray.init` starts, and so to the ones they start), or when it is a Ray process
(`ray::...`) with a file open in the cluster's session folder, which the driver names on the pipe
(`session` line) once the cluster runs: Ray retitles its agents, and under load an agent was seen
whose environment, read then, did not show the mark. Nothing else is touched (another Ray on the
machine is not), and the processes are found in /proc (Linux; elsewhere the watchdog does
nothing). Either way nothing of the cluster outlives its run by more than a few seconds.

    python -m vidbench.runner.ray.watchdog MARK DRIVER_PID
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

CLUSTER_ENV = "VIDBENCH_RAY_CLUSTER"
STOPPED = b"STOPPED\n"
SESSION = b"session "
GRACE_S = 5.0
SWEEP_S = 10.0  # how long to look for late processes (a worker the raylet was starting)


def start(mark: str) -> subprocess.Popen[bytes]:
    """The watchdog of the cluster marked `mark`, watching this process."""
    command = [sys.executable, "-m", __name__, mark, str(os.getpid())]
    env = {k: v for k, v in os.environ.items() if k != CLUSTER_ENV}
    return subprocess.Popen(command, stdin=subprocess.PIPE, env=env, start_new_session=True)


def tell_session(watchdog: subprocess.Popen[bytes], folder: str) -> None:
    """Name the cluster's session folder (the Ray processes with files open in it are its)."""
    assert watchdog.stdin is not None
    if not folder:
        return
    with contextlib.suppress(OSError):  # it is gone: nothing to tell
        watchdog.stdin.write(SESSION + folder.encode() + b"\n")
        watchdog.stdin.flush()


def stop(watchdog: subprocess.Popen[bytes]) -> None:
    """Tell the watchdog the cluster was shut down (it sweeps what is left and exits)."""
    assert watchdog.stdin is not None
    with contextlib.suppress(OSError):  # it is gone already
        watchdog.stdin.write(STOPPED)
    with contextlib.suppress(OSError):
        watchdog.stdin.close()


def _in_session(pid: str, session: bytes) -> bool:
    """Whether a Ray process (`ray::...`) has a file open in the session folder."""
    try:
        if not Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::"):
            return False
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.fsencode(os.readlink(f"/proc/{pid}/fd/{fd}")).startswith(session):
                return True
    return False


def cluster_processes(mark: str, session: bytes | None, spare: set[int]) -> list[int]:
    """The processes (but `spare`) of the cluster: marked, or Ray's with a file in `session`."""
    wanted = f"{CLUSTER_ENV}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spare:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if wanted in environ.split(b"\0") or (session and _in_session(entry.name, session)):
            found.append(int(entry.name))
    return found


def sweep(mark: str, session: bytes | None, spare: set[int], grace_s: float) -> None:
    """Kill the cluster's processes, after `grace_s` seconds for them to end on their own; look
    again until none has turned up for a while (at most SWEEP_S after the grace)."""
    deadline = time.monotonic() + grace_s
    while cluster_processes(mark, session, spare) and time.monotonic() < deadline:
        time.sleep(0.1)
    quiet_since, give_up = time.monotonic(), time.monotonic() + SWEEP_S
    while time.monotonic() < give_up and time.monotonic() - quiet_since < 2.0:
        found = cluster_processes(mark, session, spare)
        for pid in found:
            with contextlib.suppress(OSError):  # ended meanwhile
                os.kill(pid, signal.SIGKILL)
        if found:
            quiet_since = time.monotonic()
        time.sleep(0.1)


def main(argv: list[str]) -> None:
    mark, driver = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the driver's to handle
    session, stopped = None, False
    for line in sys.stdin.buffer:  # until the driver closes the pipe, or dies
        if line.startswith(SESSION):
            session = line[len(SESSION) :].rstrip(b"\n")
        stopped = line == STOPPED
    if not Path("/proc").is_dir():
        return
    sweep(mark, session, {os.getpid(), int(driver)}, GRACE_S if stopped else 0.0)


if __name__ == "__main__":
    main(sys.argv[1:])
