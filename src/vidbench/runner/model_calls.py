"""Cached model calls: sent concurrently, every reply stored, nothing asked twice.

Every call whose reply vidbench parses and keeps goes through here: an LLM judge's verdicts (the
run's judge stage, `judge autoeval-video`, caption judges, error types, red-team checks) and the
construction pipelines' generated questions, checks and captions. Each attempt of each call is
keyed by (model identity, generation settings, prompt version, exact prompt, attempt number). A
stored reply is reused; a reply the parser cannot read triggers the next attempt, up to
`max_attempts`, after which the result is `unparsed`. A failed call (after the backend's own
retries) is recorded in `failures` and gives an `error` result; the next run asks again. Every
attempt that failed and was tried again is recorded there too (status `retried`). With
`allow_calls=False` (the score stage) nothing is sent: results come from the store, are `error`
(with the message) when the last call failed, or `missing`. Identical calls (the same
key) in flight at once are merged: one is sent, the others wait for it and read its stored
reply (or share its failure), so what is sent does not depend on timing.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, TypeVar

from rich.console import Console

from vidbench.core.files import Json
from vidbench.core.requests import Request
from vidbench.models.base import Model
from vidbench.models.registry import ModelChoice
from vidbench.progress import progress_bar
from vidbench.runner.inflight import SingleFlight
from vidbench.runner.keys import digest, prompt_fingerprint
from vidbench.runner.store import RETRIED, Store
from vidbench.scoring.model_call import CallResult, CallStatus, ModelCall

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
    slots: asyncio.Semaphore,
    merged: SingleFlight | None = None,
) -> CallResult[Value]:
    reply: str | None = None
    asked = 0
    merged = merged or SingleFlight()
    for attempt in range(max_attempts):
        key = call_key(model, call, attempt)
        async with merged.hold(key) as flight:  # an identical call in flight: wait for it
            stored = store.call_reply(key)
            if stored is None:
                if not allow_calls:  # the score stage: what the last judge stage left
                    failed = store.failure_of(key)
                    status: CallStatus = "missing" if failed is None else "error"
                    return CallResult(
                        call.item, status, reply=reply, attempts=attempt, error=failed
                    )
                if flight.failure is None:
                    request = Request(key, call.item, call.messages, call.generation)
                    async with slots:
                        [response] = await model.generate([request])
                    asked += 1
                    for number, why in enumerate(response.retried, start=1):  # kept as well
                        message = f"attempt {number} failed, tried again: {why}"
                        store.put_failure(failure_plan(model), call.item, 0, key, message, RETRIED)
                    if not response.ok or response.text is None:
                        flight.failure = (response.error or response.status, response.status)
                if flight.failure is not None:  # this call failed, or the one it waited for
                    error, failed_as = flight.failure
                    store.put_failure(failure_plan(model), call.item, 0, key, error, failed_as)
                    return CallResult(
                        call.item, "error", reply=reply, attempts=attempt + 1, error=error,
                        asked=asked,
                    )  # fmt: skip
                prompt = "\n".join(m.text for m in call.messages)
                store.put_call(
                    key, model.spec, call.item, call.prompt_version, attempt, prompt, response
                )
                stored = response.text
        reply = stored
        assert reply is not None  # a reply without text is a failure, returned above
        value = call.parse(reply)
        if value is not None:
            return CallResult(call.item, "ok", value, reply, attempt + 1, asked=asked)
    return CallResult(call.item, "unparsed", reply=reply, attempts=max_attempts, asked=asked)


def describe_verdicts(verdicts: Iterable[CallResult[object]]) -> str:
    """What a judge stage did, e.g. "judge: 3 asked now, 27 reused from the store; 29 ok,
    1 failed": never "30 ok" for verdicts that were only read back."""
    verdicts = list(verdicts)
    asked = sum(1 for v in verdicts if v.asked)
    outcomes: Counter[str] = Counter(v.status for v in verdicts)
    words = {"ok": "ok", "unparsed": "unparsed", "error": "failed", "missing": "not judged yet"}
    told = ", ".join(f"{outcomes[s]} {w}" for s, w in words.items() if outcomes[s])
    return f"judge: {asked} asked now, {len(verdicts) - asked} reused from the store" + (
        f"; {told}" if told else ""
    )


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
    slots = asyncio.Semaphore(max(1, concurrency))
    merged = SingleFlight()  # identical calls at once: one is sent
    results: dict[str, CallResult[Value]] = {}
    with progress_bar(disable=not show_progress) as progress:
        bar = progress.add_task(f"{label} · {model.spec}", total=len(calls))

        async def one(call: ModelCall[Value]) -> None:
            results[call.item] = await _ask_one(
                model, call, store, max_attempts, allow_calls, slots, merged
            )
            progress.advance(bar)

        await asyncio.gather(*(one(c) for c in calls))
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
        if allow_calls:
            await model.start()
        try:
            return await ask_all(model, calls, store, allow_calls=allow_calls, **options)
        finally:
            await model.aclose()

    return asyncio.run(go())


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
        console.print(describe_verdicts(verdicts.values()), highlight=False)
    return verdicts, model.identity()
