"""The store's `calls` table (runner/store.py): every reply to a cached model call (an LLM
judge's verdicts, a construction pipeline's questions, checks and captions), its usage by model
and by prompt version."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from vidbench.core.requests import Response
from vidbench.runner.store_db import StoreFile
from vidbench.runner.usage import TOKEN_SUMS, stored_tokens, usage_record


@dataclass(frozen=True)
class StoredCall:
    """One stored reply to a cached model call (every attempt is its own row)."""

    item: str
    model: str
    prompt_version: str
    attempt: int
    prompt: str
    reply: str
    truncated: bool  # the reply stopped at its token limit (max_tokens): never read


@dataclass(frozen=True)
class CallReply:
    """A stored reply to a model call (`Store.call_reply`)."""

    text: str
    truncated: bool  # it stopped at its token limit (max_tokens)


class CallsTable(StoreFile):
    """The calls table's reads and writes (runner/store.Store has them)."""

    def all_calls(self) -> list[StoredCall]:
        """Every stored model-call reply, by item and attempt."""
        return list(self.calls())

    def calls(self) -> Iterator[StoredCall]:
        """`all_calls`, a row at a time."""
        rows = self._db.execute(
            f"SELECT item, model, prompt_version, attempt, prompt, reply, {self._added('calls')} "
            "FROM calls ORDER BY item, attempt, created"
        )
        return (
            StoredCall(item, model, version, attempt, prompt, reply, bool(truncated))
            for item, model, version, attempt, prompt, reply, truncated in rows
        )

    def call_reply(self, key: str) -> CallReply | None:
        """The stored reply to a model call, or None."""
        row = self._db.execute(
            f"SELECT reply, {self._added('calls')} FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else CallReply(row[0], bool(row[1]))

    def put_call(
        self,
        key: str,
        model: str,
        item: str,
        prompt_version: str,
        attempt: int,
        prompt: str,
        response: Response,
    ) -> None:
        assert response.text is not None, "failed model calls go to put_failure"
        self._write(
            "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                model,
                item,
                prompt_version,
                attempt,
                prompt,
                response.text,
                *stored_tokens(response.usage),
                time.time(),
                int(response.truncated),
            ),
        )

    def call_usage(self, model: str) -> dict[str, int]:
        """Model calls and tokens in/out stored for a model spec (e.g. the judge's)."""
        return self._usage("calls", "model", model)

    def call_usage_by_version(self) -> dict[str, dict[str, int]]:
        """Model calls and tokens in/out per prompt version (a construction pipeline's stages
        each ask with their own prompts, so this is the cost of each stage)."""
        totals: dict[str, dict[str, int]] = {}
        for version, _, usage in self.call_usage_by_version_and_model():
            total = totals.setdefault(version, {})
            for key, value in usage.items():
                total[key] = total.get(key, 0) + value
        return totals

    def call_usage_by_version_and_model(self) -> list[tuple[str, str, dict[str, int]]]:
        """(prompt version, model spec, calls and tokens in/out): a stage's cost per model,
        priced by models/pricing.cost_of."""
        rows = self._db.execute(
            f"SELECT prompt_version, model, COUNT(*), {TOKEN_SUMS} FROM calls "
            "GROUP BY prompt_version, model"
        )
        return [(version, spec, usage_record(*counts)) for version, spec, *counts in rows]
