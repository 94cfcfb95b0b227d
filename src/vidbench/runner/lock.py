"""One writer per results directory: a lock held for the whole of a command that writes one.

Two commands on the same results directory would both send every request (twice the cost) and
interleave their writes. The lock is an advisory `flock` on DIR/.lock, which the kernel releases
when its process ends in any way, so a run killed with kill -9 leaves nothing that blocks the
next one. The file says who holds it, for the message the second command stops with. On a disk
that is already full the lock file cannot be made or written: that is the DiskFullError every
other write of a run gives (core/errors.py), not a traceback. When the command wrote nothing
(it stopped at once: a typo in --data), the lock file it made goes when it is released, and so
does the directory if the lock made it: no empty results folder is left behind. Once held, the
folder's temporary files (core/files.write_atomic's, named as it names them) are removed: no live
writer of ours is writing them, so a command killed with kill -9 half-way through a write left
them, and the next command clears them rather than leaving them beside the results.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from vidbench.core.errors import ConfigError, DiskFullError, is_disk_full
from vidbench.core.files import make_folder, remove_temporaries

LOCK_FILE = ".lock"


@contextlib.contextmanager
def results_lock(
    directory: Path, what: str = "", kind: str = "results directory"
) -> Iterator[None]:
    """Hold `directory` (a `kind`, as messages name it) for this process; ConfigError at once
    when another process holds it."""
    made_folder = not Path(directory).exists()
    directory = make_folder(Path(directory), kind)
    with contextlib.ExitStack() as stack:
        if not (directory / LOCK_FILE).exists():  # runs last, after the unlock below
            stack.callback(_remove_if_unused, directory, made_folder)
        try:  # unbuffered: a write that fails for want of space fails here, not again at close
            handle = stack.enter_context(open(directory / LOCK_FILE, "a+b", buffering=0))
        except OSError as e:
            if is_disk_full(e):
                raise DiskFullError(directory) from e
            raise ConfigError(  # a read-only disk, a folder of another user's
                f"{directory}: cannot write there ({e.strerror or e}): give a {kind} you can "
                "write to (--out)"
            ) from e
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().decode("utf-8", "replace").strip() or "another process"
            raise ConfigError(
                f"{directory} is in use by another vidbench command ({holder}): wait for it to "
                f"finish, or give another {kind}"
            ) from None
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        try:
            handle.seek(0)
            handle.truncate()
            note = f"pid {os.getpid()}, started {started}: {what or ' '.join(sys.argv)}\n"
            handle.write(note.encode("utf-8"))
        except OSError as e:
            if is_disk_full(e):
                raise DiskFullError(directory) from e
            raise
        remove_temporaries(directory)  # a writer killed half-way left them: none is live now
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_if_unused(directory: Path, made_folder: bool) -> None:
    """Remove the lock file when `directory` holds nothing else, and the folder if it was made
    for the lock."""
    with contextlib.suppress(OSError):  # written to meanwhile, or already gone: leave it
        if [p.name for p in directory.iterdir()] == [LOCK_FILE]:
            (directory / LOCK_FILE).unlink()
            if made_folder:
                directory.rmdir()
