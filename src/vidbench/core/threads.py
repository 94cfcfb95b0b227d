"""Blocking work that an interrupted command need not wait for.

Loading a large checkpoint's weights or generating a device batch takes minutes, in code no
other thread can stop. Run with `asyncio.to_thread`, such work holds up Ctrl-C: `asyncio.run`
waits for the default executor's threads when it ends, and so does the interpreter. Run with
`in_own_thread`, it is awaited like any coroutine, and a cancelled await (Ctrl-C, SIGTERM) returns
at once, leaving the thread to finish on its own: its result was never going to be used.

Such a thread must not be left running when the interpreter ends (a daemon thread still inside
torch's C++ code is torn down mid-call, which crashes the process): `exit_if_left_running` ends
the process at once when one is, once the command has saved and said what it did, and
`wait_for_left_running` waits for them after a command that ended otherwise (on an error).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from vidbench.core.errors import EXIT_INTERRUPTED

T = TypeVar("T")

_started: list[threading.Thread] = []  # the threads in_own_thread started, while they run


async def in_own_thread(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread of its own; cancelling the await does not wait for it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():  # the await was cancelled: nobody wants the result
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]  # T when there is no error

    def run() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work()
        except BaseException as e:  # handed to the awaiting coroutine, as to_thread does
            error = e
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop is closed: the command ended without this result
            pass
        finally:
            _started.remove(threading.current_thread())

    thread = threading.Thread(target=run, name="vidbench-blocking", daemon=True)
    _started.append(thread)
    thread.start()
    return await done


def wait_for_left_running() -> None:
    """Wait for work of `in_own_thread` still running (a batch left by a run that stopped on an
    error): the interpreter must not end inside it. Ctrl-C meanwhile ends the process at once."""
    try:
        for thread in list(_started):
            thread.join()
    except KeyboardInterrupt:
        exit_if_left_running(EXIT_INTERRUPTED)


def exit_if_left_running(code: int) -> None:
    """End the process now with `code` when work of `in_own_thread` is still running (an
    interrupted load or batch), its output flushed; otherwise return."""
    if not any(thread.is_alive() for thread in list(_started)):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
