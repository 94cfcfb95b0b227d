"""Blocking work a cancelled await leaves running (core/threads.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from vidbench.core.threads import in_own_thread, wait_for_left_running


def test_a_result_and_an_error_reach_the_await() -> None:
    assert asyncio.run(in_own_thread(lambda: 41 + 1)) == 42
    with pytest.raises(ZeroDivisionError):
        asyncio.run(in_own_thread(lambda: 1 / 0))


def test_a_cancelled_await_is_not_held_up_and_the_work_is_waited_for_at_the_end() -> None:
    """The await ends at once (Ctrl-C does not wait for a weights load); a command that ends on
    an error then waits for the work, so the interpreter never ends inside it."""
    release, finished = threading.Event(), threading.Event()

    def work() -> None:
        release.wait(10)
        finished.set()

    async def cancel_it() -> float:
        task = asyncio.create_task(in_own_thread(work))
        await asyncio.sleep(0.05)
        task.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(cancel_it()) < 1
    assert not finished.is_set()
    threading.Timer(0.1, release.set).start()
    wait_for_left_running()
    assert finished.is_set()
