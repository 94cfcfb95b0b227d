"""The judge runner: stored, concurrent, bounded re-asks for unreadable replies, never twice."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from vidbench.core.messages import user
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.runner.model_calls import ask_all
from vidbench.runner.store import Store
from vidbench.scoring.model_call import ModelCall


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
