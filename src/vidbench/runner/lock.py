"""One writer per results directory: a lock held for the whole of a command that writes one.

Two commands on the same results directory would both send every request (twice the cost) and
interleave their writes. The lock is an advisory `flock` on DIR/.lock, which the kernel releases
when its process ends in any way, so a run killed with kill -9 leaves nothing that blocks the
next one. The file says who holds it, for the message the second command stops with.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from vidbench.core.errors import ConfigError
from vidbench.core.files import make_folder

LOCK_FILE = ".lock"


@contextlib.contextmanager
def results_lock(directory: Path, what: str = "") -> Iterator[None]:
    """Hold `directory` for this process; ConfigError at once when another process holds it."""
    directory = make_folder(Path(directory), "results directory")
    with open(directory / LOCK_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise ConfigError(
                f"{directory} is in use by another vidbench command ({holder}): wait for it to "
                "finish, or give another results directory"
            ) from None
        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"pid {os.getpid()}, started {started}: {what or ' '.join(sys.argv)}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
