"""DeviceBatcher: batches prepared ahead while the device runs the current one, the same
answers as without overlap, failures answered, timing summed."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Sequence

from vidbench.core.requests import GenerationConfig, Request, Response
from vidbench.models.batcher import DeviceBatcher


def _requests(n: int) -> list[Request]:
    return [Request(f"k{i}", f"s{i}", (), GenerationConfig()) for i in range(n)]


class Recorder:
    """prepare and run that sleep (releasing the GIL) and log when each batch starts and ends."""

    def __init__(self, prepare_s: float, run_s: float) -> None:
        self.prepare_s, self.run_s = prepare_s, run_s
        self.events: list[tuple[str, str, float]] = []
        self.lock = threading.Lock()

    def _log(self, what: str, batch: Sequence[Request]) -> None:
        with self.lock:
            self.events.append((what, batch[0].key, time.perf_counter()))

    def prepare(self, requests: Sequence[Request]) -> list[Request]:
        self._log("prepare-start", requests)
        time.sleep(self.prepare_s)
        return [*requests]

    def run(self, prepared: list[Request]) -> list[Response]:
        self._log("run-start", prepared)
        time.sleep(self.run_s)
        self._log("run-end", prepared)
        return [Response(r.key, f"answer to {r.sample_id} in a batch of {len(prepared)}")
                for r in prepared]  # fmt: skip


async def _submit_all(batcher: DeviceBatcher, requests: list[Request], per_call: int) -> list[str]:
    calls = [requests[i : i + per_call] for i in range(0, len(requests), per_call)]
    answers = await asyncio.gather(*(batcher.submit(c) for c in calls))
    return [r.text or "" for batch in answers for r in batch]


def test_the_next_batch_is_prepared_while_the_device_runs() -> None:
    recorder = Recorder(prepare_s=0.05, run_s=0.15)
    batcher = DeviceBatcher(recorder.run, 4, prepare=recorder.prepare, prepare_workers=2)
    answers = asyncio.run(_submit_all(batcher, _requests(16), 4))
    assert answers == [f"answer to s{i} in a batch of 4" for i in range(16)]
    starts = {key: t for what, key, t in recorder.events if what == "prepare-start"}
    runs = [(key, t) for what, key, t in recorder.events if what == "run-start"]
    ends = {key: t for what, key, t in recorder.events if what == "run-end"}
    # every batch after the first started preparing before the previous batch left the device
    for (previous, _), (key, _) in itertools.pairwise(runs):
        assert starts[key] < ends[previous]
    assert batcher.timing.batches == 4
    assert batcher.timing.device_s >= 4 * 0.15 and batcher.timing.prepare_s >= 4 * 0.05
    batcher.close()


def test_answers_equal_those_without_overlap() -> None:
    requests = _requests(10)
    recorder = Recorder(0.0, 0.0)
    sequential = [r.text for batch in (requests[:3], requests[3:6], requests[6:9], requests[9:])
                  for r in recorder.run(recorder.prepare(batch))]  # fmt: skip
    overlapped = DeviceBatcher(recorder.run, 3, prepare=recorder.prepare)
    assert asyncio.run(_submit_all(overlapped, requests, 3)) == sequential
    overlapped.close()


def test_a_failed_preparation_answers_its_batch_with_the_error() -> None:
    def prepare(requests: Sequence[Request]) -> Sequence[Request]:
        if any(r.key == "k2" for r in requests):
            raise ValueError("cannot decode image 3")
        return requests

    def run(prepared: Sequence[Request]) -> list[Response]:
        return [Response(r.key, "ok") for r in prepared]

    batcher = DeviceBatcher(run, 2, prepare=prepare)
    answers = asyncio.run(batcher.submit(_requests(4)))
    assert [r.text for r in answers] == ["ok", "ok", None, None]
    assert answers[2].error == "ValueError: cannot decode image 3" and not answers[3].ok
    batcher.close()
