"""The judge runner: stored, concurrent, bounded re-asks for unreadable replies, never twice."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from vidbench.core.messages import user
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.model_calls import (
    ask_all,
    ask_model,
    ask_streamed,
    call_key,
    describe_verdicts,
)
from vidbench.runner.store import Store
from vidbench.scoring.model_call import ModelCall
from vidbench.testing import FaultPlan, Reply, request_text

FAST = {"backoff": "0.01", "max_retries": "0"}


class ScriptedJudge(Model):
    """Replies from a per-item script (one reply per attempt); records calls and concurrency."""

    spec = "scripted-judge"

    def __init__(self, script: dict[str, list[str | None]]) -> None:
        self.script = script
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        [request] = requests
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        attempt = self.calls[request.sample_id]
        self.calls[request.sample_id] += 1
        reply = self.script[request.sample_id][attempt]
        if reply is None:
            return [Response(request.key, None, error="HTTP 503 after 6 retries")]
        return [Response(request.key, reply)]


def _parse_digit(reply: str) -> int | None:
    reply = reply.strip()
    return int(reply) if reply.isdigit() else None


def _calls(items: list[str]) -> list[ModelCall]:
    return [ModelCall(item, (user(f"judge {item}"),), "test-v1", _parse_digit) for item in items]


def test_verdicts_attempts_and_reuse(tmp_path: Path) -> None:
    script = {
        "good": ["4"],
        "second-try": ["I think it is good", "3"],
        "never": ["no", "nope", "still no"],
        "down": [None, "5"],
    }
    judge = ScriptedJudge(script)
    store = Store(tmp_path)
    verdicts = asyncio.run(ask_all(judge, _calls(list(script)), store, max_attempts=3))
    assert verdicts["good"].value == 4 and verdicts["good"].attempts == 1
    assert verdicts["second-try"].value == 3 and verdicts["second-try"].attempts == 2
    assert verdicts["never"].status == "unparsed" and verdicts["never"].reply == "still no"
    assert verdicts["down"].status == "error" and "503" in verdicts["down"].error
    assert dict(judge.calls) == {"good": 1, "second-try": 2, "never": 3, "down": 1}

    again = asyncio.run(ask_all(judge, _calls(list(script)), store, max_attempts=3))
    assert dict(judge.calls) == {"good": 1, "second-try": 2, "never": 3, "down": 2}
    assert again["down"].value == 5  # a failed call is asked again; answered ones never are
    assert {k: v.value for k, v in again.items() if k != "down"} == {
        k: v.value for k, v in verdicts.items() if k != "down"
    }

    read_only = asyncio.run(ask_all(judge, _calls(["good", "unseen"]), store, allow_calls=False))
    assert read_only["good"].value == 4 and read_only["unseen"].status == "missing"
    assert judge.calls["unseen"] == 0
    store.close()


def test_prompt_version_and_judge_are_part_of_the_key(tmp_path: Path) -> None:
    store = Store(tmp_path)
    judge = ScriptedJudge({"a": ["1", "2"]})
    asyncio.run(ask_all(judge, _calls(["a"]), store))
    changed = [ModelCall("a", (user("judge a"),), "test-v2", _parse_digit)]
    verdicts = asyncio.run(ask_all(judge, changed, store))
    assert verdicts["a"].value == 2 and judge.calls["a"] == 2
    store.close()


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    items = [f"i{n}" for n in range(40)]
    judge = ScriptedJudge({item: ["1"] for item in items})
    store = Store(tmp_path)
    asyncio.run(ask_all(judge, _calls(items), store, concurrency=5))
    assert judge.max_in_flight == 5
    store.close()


def test_identical_calls_in_flight_at_once_are_sent_once(fake, tmp_path: Path) -> None:
    """20 calls, 5 distinct prompts, all in flight together against a real HTTP server: 5 are
    sent, whatever the latency; a failed prompt's failure is every identical call's."""

    def reply(body: dict) -> str | Reply:
        if "judge 4" in request_text(body):
            return Reply(http_status=400, error="the judge cannot read this")
        return "3"

    server = fake(latency=0.05, reply=reply)
    model = load_model(
        f"openai-compat:{server.base_url}#judge", ModelOptions(concurrency=16, extra=FAST)
    )
    items = [f"item{n}" for n in range(20)]
    calls = [
        ModelCall(i, (user(f"judge {n % 5}"),), "v1", _parse_digit) for n, i in enumerate(items)
    ]
    store = Store(tmp_path)
    try:
        verdicts = ask_model(model, calls, store, concurrency=16)
        assert server.stats().received == 5 and server.stats().max_sends_per_prompt == 1
        assert sum(v.asked for v in verdicts.values()) == 5
        failed = {i for i, v in verdicts.items() if v.status == "error"}
        assert failed == {f"item{n}" for n in range(4, 20, 5)}
        assert all("the judge cannot read this" in verdicts[i].error for i in failed)
        assert all(v.value == 3 for i, v in verdicts.items() if i not in failed)
        recorded = {f.sample_id for f in store.all_failures()}
        assert recorded == failed  # each failed item says so in the store
    finally:
        store.close()


def test_a_judge_calls_failed_attempts_are_kept(fake, tmp_path: Path) -> None:
    """A judge call that failed twice and then answered: its verdict, and both failed
    attempts in the store (status `retried`), which are not the call's outcome."""
    server = fake(faults=FaultPlan(script=("500", "429")))
    model = load_model(
        f"openai-compat:{server.base_url}#judge",
        ModelOptions(concurrency=1, extra={"backoff": "0.01", "max_retries": "3"}),
    )
    store = Store(tmp_path)
    try:
        verdicts = ask_model(model, _calls(["a"]), store)
        assert verdicts["a"].value is None and verdicts["a"].status == "unparsed"
        failures = store.all_failures()
        assert [(f.sample_id, f.status) for f in failures] == [("a", "retried"), ("a", "retried")]
        assert "attempt 1 failed, tried again: server: HTTP 500" in failures[0].error
        assert "attempt 2 failed, tried again: rate_limit: HTTP 429" in failures[1].error
        key = call_key(model, _calls(["a"])[0], 0)
        assert store.failure_of(key) is None  # the call answered: no failure to report
    finally:
        store.close()


def test_a_stream_of_calls_is_built_as_it_is_asked(tmp_path: Path) -> None:
    """The run's judge stage (`ask_streamed`): 600 calls from a generator, 8 at once; no call
    is built more than the workers' 8 ahead of the ones asked, the outcomes are counted, and
    a second pass reads every reply from the store."""
    n, concurrency = 600, 8
    built = 0

    def calls() -> Iterator[ModelCall]:
        nonlocal built
        for i in range(n):
            built += 1
            yield ModelCall(f"i{i}", (user(f"judge i{i}"),), "test-v1", _parse_digit)

    # every seventh item gets three unreadable replies: unparsed after its three attempts
    judge = ScriptedJudge({f"i{i}": ["no"] * 3 if i % 7 == 0 else ["2"] for i in range(n)})
    ahead: list[int] = []
    scripted = judge.generate

    async def generate(requests: Sequence[Request]) -> list[Response]:
        ahead.append(built - len(judge.calls))  # built, not yet sent to the judge
        return await scripted(requests)

    judge.generate = generate  # type: ignore[method-assign]
    store = Store(tmp_path)
    try:
        tally = ask_streamed(judge, calls, store, concurrency=concurrency)
        unreadable = len(range(0, n, 7))
        assert max(ahead) <= concurrency and judge.max_in_flight == concurrency
        assert (tally.asked, tally.total, tally.absent) == (n, n, 0)
        assert tally.statuses == Counter({"ok": n - unreadable, "unparsed": unreadable})
        assert describe_verdicts(tally) == (
            f"judge: {n} asked now, 0 reused from the store; "
            f"{n - unreadable} ok, {unreadable} unparsed"
        )
        again = ask_streamed(judge, calls, store, concurrency=concurrency)
        assert (again.asked, again.statuses) == (0, tally.statuses)
        assert sum(judge.calls.values()) == n + 2 * unreadable  # nothing asked twice
    finally:
        store.close()


def test_a_failed_prompt_is_sent_once_however_far_apart_its_copies_come(tmp_path: Path) -> None:
    """Two workers and 12 calls whose first and last share a prompt the judge fails: by the time
    the last is taken, nobody waits on the first any more; it gets the first one's failure,
    not a second send (what is sent does not depend on how the stream is spaced)."""
    script: dict[str, list[str | None]] = {f"i{n}": ["1"] for n in range(12)}
    script["i0"] = [None]
    judge = ScriptedJudge(script)
    calls = [
        ModelCall(f"i{n}", (user("judge the same" if n in (0, 11) else f"judge {n}"),), "v1",
                  _parse_digit)
        for n in range(12)
    ]  # fmt: skip
    store = Store(tmp_path)
    try:
        verdicts = asyncio.run(ask_all(judge, calls, store, concurrency=2))
        assert judge.calls == Counter({f"i{n}": 1 for n in range(11)})  # i11 never sent
        assert (verdicts["i0"].status, verdicts["i11"].status) == ("error", "error")
        assert verdicts["i11"].error == "HTTP 503 after 6 retries" and verdicts["i11"].asked == 0
        assert {f.sample_id for f in store.all_failures()} == {"i0", "i11"}
    finally:
        store.close()
