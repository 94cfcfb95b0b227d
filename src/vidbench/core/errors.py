"""Error types and the `vidbench` command's exit codes. Every message names the file and the
record it is about."""

import errno
import shutil
from pathlib import Path

# Exit codes of the `vidbench` command, for scripts and CI:
EXIT_OK = 0  # done, and every result is complete
EXIT_ERROR = 1  # stopped by an error (the message says which)
EXIT_CONFIG = 2  # a bad configuration, option or input: nothing was run (or the usage is wrong)
EXIT_INCOMPLETE = 3  # results written, but not complete: samples without an answer or verdict
EXIT_INTERRUPTED = 130  # Ctrl-C: what was done is saved; the same command continues
EXIT_TERMINATED = 143  # SIGTERM (128 + 15), handled as Ctrl-C is: saved, cleaned up, continues


def code_of(value: object) -> str:
    """Where a value's class is defined, `package.module.Class`: in a message about a task or a
    model, it names the package (a plugin's) whose code did what the message says."""
    return f"{type(value).__module__}.{type(value).__qualname__}"


class VidbenchError(Exception):
    """Base class of the errors vidbench raises on purpose."""


class ConfigError(VidbenchError):
    """A bad configuration (unknown task, model spec, option): stops a run at once."""


class DataError(VidbenchError):
    """A bad record or file in a dataset: the sample is recorded as an error, the run goes on."""


class MediaError(DataError):
    """A video that is missing, unreadable or too short for the frames asked for."""


class DiskFullError(VidbenchError):
    """A write failed for want of space: nothing written before it is lost (every file is
    replaced whole, every store write is one transaction), and the same command run again on a
    disk with room continues where this one stopped."""

    def __init__(self, folder: Path) -> None:
        try:
            free = f"{shutil.disk_usage(folder).free / 2**20:.1f} MiB free"
        except OSError:
            free = "free space unknown"
        super().__init__(
            f"the disk holding {folder} is full ({free}): what was stored before is intact; "
            "make room (or move the folder to a larger disk) and run the same command again"
        )
        self.folder = folder


def is_disk_full(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, errno.EDQUOT)
