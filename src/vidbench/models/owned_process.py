"""A server process whose life is tied to its owner's: it ends when the vidbench process that
started it ends, however that ends (Ctrl-C, SIGTERM, `kill -9`, a crash).

The owner runs `python -m MODULE ARGS...` as

    python -m vidbench.models.owned_process --owner PID [--parent-death-signal] MODULE ARGS...

(`owned_command`), started in a process group of its own (`OWNED_POPEN`: a terminal's Ctrl-C
reaches vidbench, which stops the server, and `kill -- -PGID` ends the whole server). Here, in
the server's process, before MODULE runs:

- `--parent-death-signal` (Linux): prctl(PR_SET_PDEATHSIG, SIGKILL), so the kernel kills the
  server the moment its owner dies. Linux sends it when the *thread* that started the server
  ends, so the owner asks for it only from its main thread.
- always, and the only guard where prctl is missing or was not asked for: a watchdog thread that
  sees the owner gone (this process is given to another parent) within WATCH_S seconds and
  kills the server.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import runpy
import signal
import sys
import threading
import time
from typing import TypedDict

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_S = 0.5


class PopenOptions(TypedDict):
    """Popen keywords: a process group of its own."""

    process_group: int


OWNED_POPEN: PopenOptions = {"process_group": 0}


def owned_command(command: list[str]) -> list[str]:
    """`command` (`[python, "-m", MODULE, ARGS...]`) run under this module's guard, owned by
    this process; with the parent-death signal when called from the main thread."""
    if command[1:2] != ["-m"] or len(command) < 3:
        raise ValueError(f"expected [python, '-m', MODULE, ...], got {command[:3]}")
    guard = [command[0], "-m", __name__, "--owner", str(os.getpid())]
    if threading.current_thread() is threading.main_thread():
        guard.append("--parent-death-signal")
    return [*guard, *command[2:]]


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send `sig` to this process when its parent (thread) dies; False where
    prctl is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_owner(owner: int, interval_s: float = WATCH_S) -> None:
    """Kill this process once it is no longer `owner`'s child (the owner died)."""
    while os.getppid() == owner:
        time.sleep(interval_s)
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="run a Python module that dies with its owner")
    parser.add_argument("--owner", type=int, required=True, help="the owning process's pid")
    parser.add_argument(
        "--parent-death-signal", action="store_true", help="also use Linux's PR_SET_PDEATHSIG"
    )
    parser.add_argument("module", help="the module to run, as `python -m MODULE`")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args(argv)
    if args.parent_death_signal:
        set_parent_death_signal()
    if os.getppid() != args.owner:  # the owner died before the guard was in place
        sys.exit(f"owner {args.owner} is gone; not starting {args.module}")
    threading.Thread(target=watch_owner, args=(args.owner,), daemon=True).start()
    sys.argv = [args.module, *args.args]
    runpy.run_module(args.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
