"""Cached model calls: sent concurrently, every reply stored, nothing asked twice.

Every call whose reply vidbench parses and keeps goes through here: an LLM judge's verdicts (the
run's judge stage, `judge autoeval-video`, caption judges, error types, red-team checks) and the
construction pipelines' generated questions, checks and captions. Each attempt of each call is
keyed by (model identity, generation settings, prompt version, exact prompt, attempt number). A
stored reply is reused; a reply the parser cannot read triggers the next attempt, up to
`max_attempts`, after which the result is `unparsed`; a reply that stopped at its token limit
is `unparsed` at once (`truncated`: never parsed, since a reply cut after "1" would read as a
verdict, and not asked again, since the same call stops there again). A failed call (after the
backend's own retries) is recorded in `failures` and gives an `error` result; the next run asks
again. Every attempt that failed and was tried again is recorded there too (status `retried`). With
`allow_calls=False` (the score stage) nothing is sent: results come from the store, are `error`
(with the message) when the last call failed, or `missing`. Identical calls (the same
key) in flight at once are merged: one is sent, the others wait for it and read its stored
reply (or share its failure; a failed key keeps its failure for the rest of the call, so a
later identical call is not sent either), so what is sent does not depend on timing.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, TypeVar

from rich.console import Console

from vidbench.core.files import Json
from vidbench.core.requests import Request
from vidbench.models.base import Model, answers_of, start_checked
from vidbench.models.registry import ModelChoice
from vidbench.progress import progress_bar
from vidbench.runner.inflight import SingleFlight
from vidbench.runner.keys import digest, prompt_fingerprint
from vidbench.runner.store import RETRIED, CallReply, FailedCall, Store
from vidbench.scoring.model_call import CallResult, ModelCall

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.12

DEFAULT_ATTEMPTS = 3
Value = TypeVar("Value")  # what the calls' parser makes of a reply
CALL_PLAN = "call:"  # the `plan` prefix of failed model calls in the store's failures


class AskOptions(TypedDict, total=False):
    """`ask_all`'s keyword options that `ask_model` passes on."""

    max_attempts: int
    concurrency: int
    show_progress: bool
    label: str


def call_key(model: Model, call: ModelCall[object], attempt: int) -> str:
    return digest(
        {
            "model": model.identity(),
            "generation": call.generation.as_dict(),
            "version": call.prompt_version,
            "prompt": prompt_fingerprint(call.messages),
            "attempt": attempt,
        }
    )


def failure_plan(model: Model) -> str:
    """The `plan` under which a model's failed calls are recorded (`vidbench view` finds a
    judge's failures by the prefix)."""
    return CALL_PLAN + digest(model.identity())[:24]


async def _ask_one(
    model: Model,
    call: ModelCall[Value],
    store: Store,
    max_attempts: int,
    allow_calls: bool,
    merged: SingleFlight,
) -> CallResult[Value]:
    reply: str | None = None
    asked = 0
    for attempt in range(max_attempts):
        key = call_key(model, call, attempt)
        async with merged.hold(key) as flight:  # an identical call in flight: wait for it
            stored = store.call_reply(key)
            if stored is None:
                if not allow_calls:  # the score stage: what the last judge stage left
                    failed = store.failure_of(key)
                    if failed is None:
                        return CallResult(call.item, "missing", reply=reply, attempts=attempt)
                    return CallResult(
                        call.item, "error", reply=reply, attempts=attempt, error=failed.error,
                        change_first=failed.change_first,
                    )  # fmt: skip
                if flight.failure is None:
                    request = Request(key, call.item, call.messages, call.generation)
                    [response] = await answers_of(model, [request])  # ask_each: N at once
                    asked += 1
                    for number, why in enumerate(response.retried, start=1):  # kept as well
                        message = f"attempt {number} failed, tried again: {why}"
                        store.put_failure(failure_plan(model), call.item, 0, key, message, RETRIED)
                    if not response.ok or response.text is None:
                        error = response.error or response.status
                        flight.failure = FailedCall(response.status, error, response.change_first)
                if flight.failure is not None:  # this call failed, or the one it waited for
                    failed = FailedCall(*flight.failure)
                    store.put_failure(
                        failure_plan(model), call.item, 0, key, failed.error, failed.status,
                        failed.change_first,
                    )  # fmt: skip
                    return CallResult(
                        call.item, "error", reply=reply, attempts=attempt + 1, error=failed.error,
                        asked=asked, change_first=failed.change_first,
                    )  # fmt: skip
                prompt = "\n".join(m.text for m in call.messages)
                store.put_call(
                    key, model.spec, call.item, call.prompt_version, attempt, prompt, response
                )
                assert response.text is not None  # a reply without text is a failure, above
                stored = CallReply(response.text, response.truncated)
        reply = stored.text
        if stored.truncated:  # cut at its token limit: never a value; asking again cuts again
            return CallResult(
                call.item, "unparsed", reply=reply, attempts=attempt + 1, asked=asked,
                truncated=True,
            )  # fmt: skip
        value = call.parse(reply)
        if value is not None:
            return CallResult(call.item, "ok", value, reply, attempt + 1, asked=asked)
    return CallResult(call.item, "unparsed", reply=reply, attempts=max_attempts, asked=asked)


@dataclass
class CallTally:
    """What a stream of model calls gave, without holding the results: how many were asked
    now (the rest came from the store) and how many ended in each status."""

    asked: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    truncated: int = 0  # of the unparsed: replies that stopped at their token limit
    # of the failed: calls the API refused and would refuse again, by what must change first
    change_first: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, results: Iterable[CallResult[object]]) -> CallTally:
        tally = cls()
        for result in results:
            tally.add(result)
        return tally

    def add(self, result: CallResult[object]) -> None:
        self.asked += 1 if result.asked else 0
        self.statuses[result.status] += 1
        self.truncated += result.truncated
        if result.change_first is not None:
            self.change_first[result.change_first] += 1

    @property
    def total(self) -> int:
        return self.statuses.total()

    @property
    def absent(self) -> int:
        """Calls without a verdict (failed, or never judged): CallResult.absent."""
        return self.statuses["error"] + self.statuses["missing"]


def describe_verdicts(tally: CallTally) -> str:
    """What a judge stage did, e.g. "judge: 3 asked now, 27 reused from the store; 29 ok,
    1 failed": never "30 ok" for verdicts that were only read back."""
    words = {"ok": "ok", "unparsed": "unparsed", "error": "failed", "missing": "not judged yet"}
    if tally.truncated:
        words["unparsed"] += f" ({tally.truncated} stopped at the token limit)"
    told = ", ".join(f"{tally.statuses[s]} {w}" for s, w in words.items() if tally.statuses[s])
    return f"judge: {tally.asked} asked now, {tally.total - tally.asked} reused from the store" + (
        f"; {told}" if told else ""
    )


async def ask_each(
    model: Model,
    calls: Iterable[ModelCall[Value]],
    store: Store,
    done: Callable[[CallResult[Value]], None],
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 16,
    allow_calls: bool = True,
    show_progress: bool = False,
    label: str = "judge",
    total: int | None = None,
) -> None:
    """Every call asked (stored replies reused), each result given to `done` as it comes, on a
    progress bar named by `label` (judge, generate, validate, ...) out of `total`.
    `concurrency` workers take the next call from `calls` when theirs is answered, so a
    generator of calls is built as it is asked: at most `concurrency` calls are held at once,
    however many there are."""
    merged = SingleFlight()  # identical calls at once: one is sent
    source = iter(calls)  # shared by the workers; one event loop, so never read at once
    with progress_bar(disable=not show_progress) as progress:
        bar = progress.add_task(f"{label} · {model.spec}", total=total)

        async def worker() -> None:
            for call in source:
                done(await _ask_one(model, call, store, max_attempts, allow_calls, merged))
                progress.advance(bar)

        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))


@asynccontextmanager
async def _opened(model: Model, allow_calls: bool) -> AsyncIterator[None]:
    """The model's start check (server reachable, key accepted) unless nothing may be sent,
    and the model closed after."""
    if allow_calls:
        await start_checked(model)
    try:
        yield
    finally:
        await model.aclose()


async def ask_all(
    model: Model,
    calls: Sequence[ModelCall[Value]],
    store: Store,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 16,
    allow_calls: bool = True,
    show_progress: bool = False,
    label: str = "judge",
) -> dict[str, CallResult[Value]]:
    """Results by item. Items must be unique. `label` names the work on the progress bar
    (judge, generate, validate, ...)."""
    items = [c.item for c in calls]
    if len(set(items)) != len(items):
        raise ValueError("model calls must have unique items")
    results: dict[str, CallResult[Value]] = {}

    def done(result: CallResult[Value]) -> None:
        results[result.item] = result

    await ask_each(
        model,
        calls,
        store,
        done,
        max_attempts=max_attempts,
        concurrency=concurrency,
        allow_calls=allow_calls,
        show_progress=show_progress,
        label=label,
        total=len(calls),
    )
    return results


def ask_model(
    model: Model,
    calls: Sequence[ModelCall[Value]],
    store: Store,
    *,
    allow_calls: bool = True,
    **options: Unpack[AskOptions],
) -> dict[str, CallResult[Value]]:
    """`ask_all` in an event loop of its own (`options`: ask_all's max_attempts, concurrency,
    show_progress, label), after the model's start check (server reachable, key accepted) and
    with the model closed after it. No calls: nothing starts. `allow_calls=False` (the score
    stage): stored results only, the model is never started."""

    async def go() -> dict[str, CallResult[Value]]:
        if not calls:
            return {}
        async with _opened(model, allow_calls):
            return await ask_all(model, calls, store, allow_calls=allow_calls, **options)

    return asyncio.run(go())


def ask_streamed(
    model: Model,
    calls: Callable[[], Iterable[ModelCall[object]]],
    store: Store,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 16,
    show_progress: bool = False,
    label: str = "judge",
) -> CallTally:
    """The run's judge stage: every call of `calls()` asked as it is built (`ask_each`), after
    the model's start check and with the model closed after it; what they gave, counted (the
    verdicts stay in the store, where the score stage reads a batch's at a time). With a
    progress bar, `calls()` is gone through once more first, to count them."""
    tally = CallTally()

    async def go() -> None:
        source = iter(calls())
        first = next(source, None)
        if first is None:
            return
        total = sum(1 for _ in calls()) if show_progress else None
        async with _opened(model, allow_calls=True):
            await ask_each(
                model,
                itertools.chain([first], source),
                store,
                tally.add,
                max_attempts=max_attempts,
                concurrency=concurrency,
                show_progress=show_progress,
                label=label,
                total=total,
            )

    asyncio.run(go())
    return tally


class CallSettings(Protocol):
    """What a command's config says about its model calls (`--attempts`, `--concurrency`, and
    whether a progress bar shows); read only, so a frozen dataclass is one."""

    @property
    def attempts(self) -> int: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def progress(self) -> bool: ...


def ask_in(
    folder: Path,
    model: Model,
    calls: Sequence[ModelCall[Value]],
    settings: CallSettings,
    label: str = "judge",
) -> dict[str, CallResult[Value]]:
    """`ask_model` with the store of `folder` (FOLDER/store.sqlite) and a command's settings."""
    with Store(folder) as store:
        return ask_model(
            model,
            calls,
            store,
            max_attempts=settings.attempts,
            concurrency=settings.concurrency,
            show_progress=settings.progress,
            label=label,
        )


def ask_judge(
    judge: ModelChoice,
    calls: Sequence[ModelCall[Value]],
    store: Store,
    attempts: int,
    show_progress: bool = False,
    console: Console | None = None,
) -> tuple[dict[str, CallResult[Value]], dict[str, Json]]:
    """Verdicts by item (stored answers reused, nothing asked twice) and the judge's identity;
    what was asked and what came from the store is printed to `console`."""
    model = judge.load()
    verdicts = ask_model(
        model,
        calls,
        store,
        max_attempts=attempts,
        concurrency=judge.concurrency,
        show_progress=show_progress,
    )
    if console is not None and verdicts:
        console.print(describe_verdicts(CallTally.of(verdicts.values())), highlight=False)
    return verdicts, model.identity()
