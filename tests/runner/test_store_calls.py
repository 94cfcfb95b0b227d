"""The store's model-call table: every reply is kept with its model, prompt version and tokens,
found again by its key, and read alike by a store opened read-only (vidbench view)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.core.requests import Response, Usage
from vidbench.runner.store import CallReply, FailedCall, RequestRecord, Store


def _as_made_before_truncated(folder: Path) -> None:
    """The store of `folder` as a vidbench before the `truncated` columns made it."""
    db = sqlite3.connect(folder / Store.FILENAME)
    for table in ("responses", "calls"):
        db.execute(f"ALTER TABLE {table} DROP COLUMN truncated")
    db.commit()
    db.close()


def test_a_store_made_before_the_truncated_columns_is_read_and_written(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.put_call("k1", "m", "a", "v1", 0, "p", Response("k1", "1"))
    _as_made_before_truncated(tmp_path)
    with Store.read_only(tmp_path) as store:  # vidbench view: nothing is changed
        assert [c.truncated for c in store.all_calls()] == [False]
        assert store.call_reply("k1") == CallReply("1", truncated=False)
    with Store(tmp_path) as store:  # a run: the columns are added, the rows kept
        store.put_call("k2", "m", "b", "v1", 0, "p", Response("k2", "1", truncated=True))
        assert store.call_reply("k1") == CallReply("1", truncated=False)
        assert store.call_reply("k2") == CallReply("1", truncated=True)


def test_calls_are_kept_and_read_back_read_only(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        usage = Usage(input_tokens=10, output_tokens=2)
        store.put_call(
            "k1", "openai:gpt-4o", "a:rule", "v1", 0, "p", Response("k1", "[[1]]", usage=usage)
        )
        store.put_call("k2", "m", "b:rule", "v2", 1, "p2", Response("k2", "[[0]]", usage=Usage()))
        store.put_call("k4", "m", "c:rule", "v2", 0, "p4", Response("k4", "[[1", truncated=True))
        assert store.call_reply("k1") == CallReply("[[1]]", truncated=False)
        assert store.call_reply("k4") == CallReply("[[1", truncated=True)
        assert store.call_reply("k3") is None
    with Store.read_only(tmp_path) as store:
        calls = store.all_calls()
        assert [(c.item, c.model, c.attempt, c.reply) for c in calls] == [
            ("a:rule", "openai:gpt-4o", 0, "[[1]]"),
            ("b:rule", "m", 1, "[[0]]"),
            ("c:rule", "m", 0, "[[1"),
        ]
        assert [c.truncated for c in calls] == [False, False, True]
        assert store.call_usage("openai:gpt-4o") == {
            "requests": 1,
            "input_tokens": 10,
            "output_tokens": 2,
        }
        assert store.call_usage_by_version() == {
            "v1": {"requests": 1, "input_tokens": 10, "output_tokens": 2},
            "v2": {"requests": 2, "input_tokens": 0, "output_tokens": 0},
        }


def test_a_failure_after_an_answer_makes_it_stale_only_for_another_request(
    tmp_path: Path,
) -> None:
    """A failure stored after a sample's answer means its prompt changed, unless the failed
    request is the answered one (a Ray worker's failed attempt, spooled and stored late)."""
    record: RequestRecord = {"frames": [], "prompt": []}
    with Store(tmp_path) as store:
        for sample in ("s0", "s1"):
            store.put_response("p", sample, 1, "h", record, Response(f"{sample}-old", "(A)"))
        store.put_failure("p", "s0", 2, "s0-new", "s0: HTTP 500", "error")  # another prompt
        store.put_failure("p", "s1", 2, "s1-old", "s1: worker lost", "error")  # the same one
        assert store.failed_since_answered("p", ["s0", "s1"]) == {
            "s0": FailedCall("error", "s0: HTTP 500")
        }
