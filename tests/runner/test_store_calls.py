"""The store's model-call table: every reply is kept with its model, prompt version and tokens,
found again by its key, and read alike by a store opened read-only (vidbench view)."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.requests import Response, Usage
from vidbench.runner.store import Store


def test_calls_are_kept_and_read_back_read_only(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        usage = Usage(input_tokens=10, output_tokens=2)
        store.put_call(
            "k1", "openai:gpt-4o", "a:rule", "v1", 0, "p", Response("k1", "[[1]]", usage=usage)
        )
        store.put_call("k2", "m", "b:rule", "v2", 1, "p2", Response("k2", "[[0]]", usage=Usage()))
        assert store.call_reply("k1") == "[[1]]" and store.call_reply("k3") is None
    with Store.read_only(tmp_path) as store:
        calls = store.all_calls()
        assert [(c.item, c.model, c.attempt, c.reply) for c in calls] == [
            ("a:rule", "openai:gpt-4o", 0, "[[1]]"),
            ("b:rule", "m", 1, "[[0]]"),
        ]
        assert store.call_usage("openai:gpt-4o") == {
            "requests": 1,
            "input_tokens": 10,
            "output_tokens": 2,
        }
        assert store.call_usage_by_version() == {
            "v1": {"requests": 1, "input_tokens": 10, "output_tokens": 2},
            "v2": {"requests": 1, "input_tokens": 0, "output_tokens": 0},
        }
