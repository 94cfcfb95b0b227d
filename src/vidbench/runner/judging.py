"""Run JudgeCalls against a judge model: concurrently, stored, never asked twice.

Each attempt of each call is keyed by (judge identity, generation settings, prompt version, exact
prompt, attempt number). A stored reply is reused; a reply the parser cannot read triggers the
next attempt, up to `max_attempts`, after which the verdict is `unparsed`. A failed call (after
the backend's own retries) is recorded in `failures` and gives an `error` verdict; the next run
asks again. Identical calls (the same key) in flight at once are merged: one is sent, the others
wait for it and read its stored reply (or share its failure), so what is sent does not depend on
timing. With `allow_calls=False` (the score stage) nothing is sent: verdicts come from the
store, are `error` (with the message) when the last judge stage's call failed, or `missing`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from vidbench.core.requests import Request
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model
from vidbench.progress import progress_bar
from vidbench.runner.inflight import SingleFlight
from vidbench.runner.keys import digest, prompt_fingerprint
from vidbench.runner.store import Store
from vidbench.scoring.judge import JudgeCall, Verdict

DEFAULT_ATTEMPTS = 3


def judgment_key(judge: Model, call: JudgeCall, attempt: int) -> str:
    return digest(
        {
            "judge": judge.identity(),
            "generation": call.generation.as_dict(),
            "version": call.prompt_version,
            "prompt": prompt_fingerprint(call.messages),
            "attempt": attempt,
        }
    )


def judge_plan(judge: Model) -> str:
    """The `plan` under which failed judge calls are recorded."""
    return "judge:" + digest(judge.identity())[:24]


async def _judge_one(
    judge: Model,
    call: JudgeCall,
    store: Store,
    max_attempts: int,
    allow_calls: bool,
    slots: asyncio.Semaphore,
    merged: SingleFlight | None = None,
) -> Verdict:
    reply: str | None = None
    asked = 0
    merged = merged or SingleFlight()
    for attempt in range(max_attempts):
        key = judgment_key(judge, call, attempt)
        async with merged.hold(key) as flight:  # an identical call in flight: wait for it
            stored = store.judgment(key)
            if stored is None:
                if not allow_calls:  # the score stage: what the last judge stage left
                    failed = store.failure_of(key)
                    status = "missing" if failed is None else "error"
                    return Verdict(call.item, status, reply=reply, attempts=attempt, error=failed)
                if flight.failure is None:
                    request = Request(key, call.item, call.messages, call.generation)
                    async with slots:
                        [response] = await judge.generate([request])
                    asked += 1
                    if not response.ok or response.text is None:
                        flight.failure = (response.error or response.status, response.status)
                if flight.failure is not None:  # this call failed, or the one it waited for
                    error, status = flight.failure
                    store.put_failure(judge_plan(judge), call.item, 0, key, error, status)
                    return Verdict(
                        call.item, "error", reply=reply, attempts=attempt + 1, error=error,
                        asked=asked,
                    )  # fmt: skip
                prompt = "\n".join(m.text for m in call.messages)
                store.put_judgment(
                    key, judge.spec, call.item, call.prompt_version, attempt, prompt, response
                )
                stored = response.text
        reply = stored
        value = call.parse(reply)
        if value is not None:
            return Verdict(call.item, "ok", value, reply, attempt + 1, asked=asked)
    return Verdict(call.item, "unparsed", reply=reply, attempts=max_attempts, asked=asked)


def describe_verdicts(verdicts: Iterable[Verdict]) -> str:
    """What a judge stage did, e.g. "judge: 3 asked now, 27 reused from the store; 29 ok,
    1 failed": never "30 ok" for verdicts that were only read back."""
    verdicts = list(verdicts)
    asked = sum(1 for v in verdicts if v.asked)
    outcomes = Counter(v.status for v in verdicts)
    words = {"ok": "ok", "unparsed": "unparsed", "error": "failed", "missing": "not judged yet"}
    told = ", ".join(f"{outcomes[s]} {w}" for s, w in words.items() if outcomes[s])
    return f"judge: {asked} asked now, {len(verdicts) - asked} reused from the store" + (
        f"; {told}" if told else ""
    )


async def judge_all(
    judge: Model,
    calls: Sequence[JudgeCall],
    store: Store,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 16,
    allow_calls: bool = True,
    show_progress: bool = False,
) -> dict[str, Verdict]:
    """Verdicts by item. Items must be unique."""
    items = [c.item for c in calls]
    if len(set(items)) != len(items):
        raise ValueError("judge calls must have unique items")
    slots = asyncio.Semaphore(max(1, concurrency))
    merged = SingleFlight()  # identical calls at once: one is sent
    verdicts: dict[str, Verdict] = {}
    with progress_bar(disable=not show_progress) as progress:
        bar = progress.add_task(f"judge · {judge.spec}", total=len(calls))

        async def one(call: JudgeCall) -> None:
            verdicts[call.item] = await _judge_one(
                judge, call, store, max_attempts, allow_calls, slots, merged
            )
            progress.advance(bar)

        await asyncio.gather(*(one(c) for c in calls))
    return verdicts


def ask_model(
    model: Model,
    calls: Sequence[JudgeCall],
    store: Store,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 16,
    show_progress: bool = False,
    allow_calls: bool = True,
) -> dict[str, Verdict]:
    """`judge_all` in an event loop of its own, after the model's start check (server
    reachable, key accepted) and with the model closed after it. No calls: nothing starts.
    `allow_calls=False` (the score stage): stored verdicts only, the model is never started."""

    async def go() -> dict[str, Verdict]:
        if not calls:
            return {}
        if allow_calls:
            await model.start()
        try:
            return await judge_all(
                model,
                calls,
                store,
                max_attempts=max_attempts,
                concurrency=concurrency,
                allow_calls=allow_calls,
                show_progress=show_progress,
            )
        finally:
            await model.aclose()

    return asyncio.run(go())


@dataclass(frozen=True)
class JudgeModel:
    """A judge named by a model spec, with its backend options and call settings."""

    spec: str
    options: dict[str, str] = field(default_factory=dict)
    concurrency: int = 16
    seed: int = 0

    def load(self) -> Model:
        options = ModelOptions(self.seed, self.concurrency, dict(self.options), "--judge-opt")
        return load_model(self.spec, options)


def ask_judge(
    judge: JudgeModel,
    calls: Sequence[JudgeCall],
    store: Store,
    attempts: int,
    show_progress: bool = False,
    console: Console | None = None,
) -> tuple[dict[str, Verdict], dict[str, Any]]:
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
