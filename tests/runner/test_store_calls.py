"""The store's model-call table: a store written when it was named `judgments` (with a `judge`
column) keeps every stored reply, read-only and read-write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vidbench.core.requests import Response, Usage
from vidbench.runner.store import Store

OLD_SCHEMA = """
CREATE TABLE judgments (
    key TEXT PRIMARY KEY, judge TEXT NOT NULL, item TEXT NOT NULL, prompt_version TEXT NOT NULL,
    attempt INTEGER NOT NULL, prompt TEXT NOT NULL, reply TEXT NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, created REAL NOT NULL
);
"""


def _old_store(folder: Path) -> None:
    folder.mkdir()
    with sqlite3.connect(folder / Store.FILENAME) as db:
        db.executescript(OLD_SCHEMA)
        db.execute(
            "INSERT INTO judgments VALUES ('k1', 'openai:gpt-4o', 'a:rule', 'v1', 0, 'p', "
            "'[[1]]', 10, 2, 0)"
        )


def test_an_old_store_is_read_as_it_is_and_renamed_when_written(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    _old_store(folder)
    with Store.read_only(folder) as store:  # vidbench view never changes a store
        [call] = store.all_calls()
        assert (call.item, call.model, call.reply) == ("a:rule", "openai:gpt-4o", "[[1]]")
        assert store.call_usage("openai:gpt-4o") == {
            "requests": 1,
            "input_tokens": 10,
            "output_tokens": 2,
        }
    with sqlite3.connect(folder / Store.FILENAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "judgments" in tables and "calls" not in tables

    with Store(folder) as store:  # opened for writing: renamed in place, nothing lost
        assert store.call_reply("k1") == "[[1]]"
        store.put_call("k2", "m", "b:rule", "v1", 0, "p2", Response("k2", "[[0]]", usage=Usage()))
        assert [c.item for c in store.all_calls()] == ["a:rule", "b:rule"]
        assert store.call_usage_by_version()["v1"]["requests"] == 2
    with sqlite3.connect(folder / Store.FILENAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "calls" in tables and "judgments" not in tables
