"""The one place an infer stage writes what happened to a request into the store.

`Answer` is a plain picklable record (a Ray worker sends it back to the driver); the `Recorder`
writes it and counts it, for the local infer stage and the Ray driver alike, so both leave the
same rows in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from vidbench.core.records import batched
from vidbench.core.requests import Response, Usage
from vidbench.runner.store import MAX_IDS, RETRIED, RequestRecord, Store


@dataclass
class InferStats:
    planned: int = 0
    reused: int = 0  # answered by an earlier run: no model call
    answered: int = 0  # answered now
    failed: int = 0
    usage: Usage = field(default_factory=Usage)
    # a local model's device and preparing seconds when they come from elsewhere (Ray workers,
    # summed, with "devices"); None: the model object's own `timing()`
    timing: dict[str, float | int] | None = None


@dataclass(frozen=True)
class Answer:
    """A model's response to one sample's request, with what the store keeps about the request."""

    sample_id: str
    prompt_hash: str
    record: RequestRecord
    response: Response


class Recorder:
    """Writes answers and failures of one run into the store and counts them."""

    def __init__(
        self,
        store: Store,
        plan: str,
        run_id: int,
        planned: int,
        advance: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.plan = plan
        self.run_id = run_id
        self.stats = InferStats(planned=planned)
        self._advance = advance

    def answered_among(self, keys: Iterable[str]) -> set[str]:
        """Those of these request keys already answered (by an earlier run, or this one): never
        sent to the model again, and made their samples' latest answers (Store.answered_among).
        Asked of the store a batch at a time, so a run holds no set of every answered key."""
        found: set[str] = set()
        for some in batched(keys, MAX_IDS):
            found |= self.store.answered_among(self.plan, some)
        return found

    def reused(self) -> None:
        self.stats.reused += 1
        self._advance()

    def failure(self, sample_id: str, key: str | None, message: str, status: str) -> None:
        """A sample that got no answer: unusable media, a failed call, a request that killed
        its workers."""
        self.store.put_failure(self.plan, sample_id, self.run_id, key, message, status)
        self.stats.failed += 1
        self._advance()

    def answered_keys_of(self, sample_ids: Sequence[str]) -> set[str]:
        """The request keys answered already for these samples (at most MAX_IDS)."""
        return self.store.answered_keys_of(self.plan, sample_ids)

    def answer(self, answer: Answer) -> None:
        store_answer(self.store, self.plan, self.run_id, answer)
        response = answer.response
        if not response.ok:
            self.stats.failed += 1
        else:
            self.stats.answered += 1
            self.stats.usage += response.usage
        self._advance()


def failure_message(answer: Answer) -> str:
    return f"{answer.sample_id}: {answer.response.error or answer.response.status}"


def store_answer(store: Store, plan: str, run_id: int, answer: Answer) -> None:
    """The rows of one answer: each attempt that failed and was tried again, then the answer or
    the call's failure."""
    response = answer.response
    for number, why in enumerate(response.retried, start=1):  # tried again: kept too
        message = f"{answer.sample_id}: attempt {number} failed, tried again: {why}"
        store.put_failure(plan, answer.sample_id, run_id, response.key, message, RETRIED)
    if response.ok:
        store.put_response(
            plan, answer.sample_id, run_id, answer.prompt_hash, answer.record, response
        )
    else:
        message = failure_message(answer)
        store.put_failure(
            plan, answer.sample_id, run_id, response.key, message, response.status,
            response.change_first,
        )  # fmt: skip
