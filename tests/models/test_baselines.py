"""The built-in baselines behind the model interface."""

from __future__ import annotations

import asyncio
from collections import Counter

from vidbench.core.requests import Request
from vidbench.models.registry import ModelOptions, load_model
from vidbench.scoring.choices import extract_choice


def _requests(n: int) -> list[Request]:
    return [Request(f"k{i}", f"sample-{i}", (), choices=("A", "B", "C", "D")) for i in range(n)]


def test_random_is_uniform_seeded_and_order_free() -> None:
    model = load_model("random", ModelOptions(seed=3))
    requests = _requests(8000)
    replies = asyncio.run(model.generate(requests))
    picks = Counter(extract_choice(r.text) for r in replies)
    assert set(picks) == {"A", "B", "C", "D"}
    assert all(abs(count / 8000 - 0.25) < 0.02 for count in picks.values())
    reversed_replies = asyncio.run(model.generate(requests[::-1]))[::-1]
    assert [r.text for r in reversed_replies] == [r.text for r in replies]
    other_seed = asyncio.run(load_model("random", ModelOptions(seed=4)).generate(requests))
    assert [r.text for r in other_seed] != [r.text for r in replies]
    assert model.identity() == {"spec": "random", "seed": 3}


def test_random_without_options_is_an_error_response() -> None:
    [reply] = asyncio.run(load_model("random").generate([Request("k", "s", ())]))
    assert reply.status == "error" and "no options" in reply.error


def test_constant() -> None:
    [reply] = asyncio.run(load_model("constant:(C)").generate(_requests(1)))
    assert reply.text == "(C)" and reply.ok
