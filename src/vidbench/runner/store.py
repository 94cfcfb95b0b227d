"""The results store: one SQLite database (WAL) per results directory, appended to.

responses: one row per answered request, keyed by the request's content hash; a key that is
    present is never sent to the model again.
calls:     every reply to a cached model call (an LLM judge's verdicts, a construction
    pipeline's generated questions, checks and captions), keyed by the model, its settings, the
    prompt version, the exact prompt and the attempt number; never requested again.
    In both, `truncated` is 1 for a reply that stopped at its token limit (Response.truncated),
    and input_tokens and output_tokens are -1 (runner/usage.py) for a reply that reported no
    usage (Usage.unknown): counted as 0 tokens and as a call of unknown usage.
failures:  every failed attempt, with its status and message: unusable media (`media`), a call
    that failed after its retries (`error`, ...), and each attempt that failed and was tried
    again (`retried`, whatever came of the call). A failed sample is asked again by the next
    run; its failures stay for the record. A call the API refused and would refuse again
    (`rejected`) has `change_first`: what must change before it can succeed (models/retry.py).
runs:      every invocation with its configuration.
data_rows: the rows the runs read, with fingerprint and data folder (runner/data_identity.py).
Each write commits at once, so a run killed at any moment loses at most the request in flight.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

from pydantic import JsonValue

from vidbench.core.errors import DiskFullError
from vidbench.core.requests import Response
from vidbench.media.frame import FrameRecord
from vidbench.runner.store_calls import CallReply, CallsTable, StoredCall
from vidbench.runner.store_db import StoreError, is_full
from vidbench.runner.usage import stored_tokens

__all__ = ["MAX_IDS", "RETRIED", "CallReply", "RequestRecord", "Store", "StoreError"]
__all__ += ["FailedCall", "StoredCall", "StoredFailure", "StoredResponse"]

# sample ids one query may name (SQLite takes 32,766 parameters since 3.32, 999 before)
MAX_IDS = 900
RETRIED = "retried"  # the status of a failed attempt that was tried again: not the outcome


class RequestRecord(TypedDict):
    """What the store keeps about a request (no image bytes): its frames and its prompt text."""

    frames: list[FrameRecord]
    prompt: list[str]


@dataclass(frozen=True)
class StoredResponse:
    key: str
    sample_id: str
    prompt_hash: str
    frames: list[FrameRecord]  # the images the request showed
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    truncated: bool  # the reply stopped at its token limit (max_tokens)


class FailedCall(NamedTuple):
    """How a sample's request, or a model call, last failed."""

    status: str
    error: str  # the message
    change_first: str | None = None  # status rejected: what must change first (Response's)


@dataclass(frozen=True)
class StoredFailure:
    plan: str
    sample_id: str  # the sample, or the judge call's item for a failed judge call
    status: str
    error: str


class Store(CallsTable):
    """The store of one results directory (`with Store(folder) as store:`): its answers,
    failures, runs and data rows here, its calls table in runner/store_calls.py, its file in
    runner/store_db.py."""

    def all_failures(self) -> list[StoredFailure]:
        """Every failed attempt, oldest first."""
        return list(self.failures())

    def failures(self) -> Iterator[StoredFailure]:
        """`all_failures`, a row at a time."""
        rows = self._db.execute("SELECT plan, sample_id, status, error FROM failures ORDER BY id")
        return (StoredFailure(*row) for row in rows)

    def prompts(self) -> Iterator[tuple[str, list[str]]]:
        """The prompt hash and prompt text of every stored request, a row at a time."""
        for prompt_hash, request in self._db.execute("SELECT prompt_hash, request FROM responses"):
            yield prompt_hash, list(json.loads(request).get("prompt", []))

    def start_run(self, plan: str, config: dict[str, JsonValue]) -> int:
        cursor = self._write(
            "INSERT INTO runs (created, plan, config) VALUES (?, ?, ?)",
            (time.time(), plan, json.dumps(config, sort_keys=True)),
        )
        assert cursor.lastrowid is not None  # an INSERT sets it
        return cursor.lastrowid

    def has_answers(self, plan: str) -> bool:
        """Whether any response of the plan is stored."""
        found = self._db.execute("SELECT 1 FROM responses WHERE plan = ? LIMIT 1", (plan,))
        return found.fetchone() is not None

    def answered_among(self, plan: str, keys: Sequence[str]) -> set[str]:
        """Those of these request keys of a plan (at most MAX_IDS), which a run asks now, that
        have a stored response, each made its sample's latest (what `responses` reads) where
        another came since: a video edited, then put back, is scored by its first answers."""
        among, _ = _among(keys, "key")  # read first: most reruns write nothing
        rows = self._db.execute(
            "SELECT key, created < (SELECT MAX(created) FROM responses r WHERE r.plan = ? AND "
            f"r.sample_id = responses.sample_id) FROM responses WHERE 1{among}",  # by key, not plan
            (plan, *keys),
        ).fetchall()
        if stale := [key for key, old in rows if old]:
            at, _ = _among(stale, "key")
            self._write(f"UPDATE responses SET created = ? WHERE 1{at}", (time.time(), *stale))
        return {key for key, _ in rows}

    def answered_keys_of(self, plan: str, sample_ids: Sequence[str]) -> set[str]:
        """The request keys of a plan answered for these samples (at most MAX_IDS)."""
        among, ids = _among(sample_ids)
        rows = self._db.execute(f"SELECT key FROM responses WHERE plan = ?{among}", (plan, *ids))
        return {key for (key,) in rows}

    def put_response(
        self,
        plan: str,
        sample_id: str,
        run_id: int,
        prompt_hash: str,
        request: RequestRecord,
        response: Response,
    ) -> None:
        """Record an answer; a key already answered is left as it was."""
        assert response.text is not None, "failed responses go to put_failure"
        self._write(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                response.key,
                plan,
                sample_id,
                run_id,
                prompt_hash,
                json.dumps(request),
                response.text,
                *stored_tokens(response.usage),
                response.latency_s,
                time.time(),
                int(response.truncated),
            ),
        )

    def put_failure(
        self,
        plan: str,
        sample_id: str,
        run_id: int,
        key: str | None,
        error: str,
        status: str = "error",
        change_first: str | None = None,
    ) -> None:
        """Record a failed attempt: `status` is media (unusable input), a Response status, or
        RETRIED (an attempt that was tried again); `change_first`: a rejected call's
        `Response.change_first`."""
        self._write(
            "INSERT INTO failures (plan, sample_id, run_id, key, status, error, created, "
            "change_first) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (plan, sample_id, run_id, key, status, error, time.time(), change_first),
        )

    def responses(
        self, plan: str, sample_ids: Sequence[str] | None = None
    ) -> dict[str, StoredResponse]:
        """The latest answer per sample of a plan (of these samples only: a batch of at most
        MAX_IDS, so a large run is read a batch at a time). The questions of one clip show the
        same frames: their `frames` are one list, read once (not to be changed)."""
        among, ids = _among(sample_ids)
        rows = self._db.execute(
            "SELECT key, sample_id, prompt_hash, json_extract(request, '$.frames'), text, "
            f"input_tokens, output_tokens, latency_s, {self._added('responses')} "
            f"FROM responses WHERE plan = ?{among} ORDER BY created",
            (plan, *ids),
        )
        frames: dict[str | None, list[FrameRecord]] = {None: []}
        found = {}
        for key, sample_id, prompt_hash, shown, text, t_in, t_out, latency, truncated in rows:
            if shown not in frames:
                frames[shown] = json.loads(shown)
            found[sample_id] = StoredResponse(
                key, sample_id, prompt_hash, frames[shown], text, t_in, t_out, latency,
                bool(truncated),
            )  # fmt: skip
        return found

    def last_failures(
        self, plan: str, sample_ids: Sequence[str] | None = None
    ) -> dict[str, FailedCall]:
        """The most recent failure per sample of a plan (of these samples only, as
        `responses`; attempts that were tried again are not an outcome)."""
        among, ids = _among(sample_ids)
        rows = self._db.execute(
            f"SELECT sample_id, status, error, {self._added('failures')} FROM failures "
            f"WHERE plan = ? AND status != ?{among} ORDER BY id",
            (plan, RETRIED, *ids),
        )
        return {sample_id: FailedCall(*failed) for sample_id, *failed in rows}

    def failed_since_answered(self, plan: str, sample_ids: Sequence[str]) -> dict[str, FailedCall]:
        """The samples (at most MAX_IDS) whose last failure, of a request no answer is to,
        came after their answer: a prompt since changed (a row's field it shows edited), or
        media now unusable, whose answer is to the old one."""
        among, ids = _among(sample_ids, "f.sample_id")
        rows = self._db.execute(
            f"SELECT f.sample_id, f.status, f.error, {self._added('failures')} FROM failures f "
            f"WHERE f.plan = ?{among} AND "
            "f.status != ? AND f.created > (SELECT MAX(r.created) FROM responses r WHERE "
            "r.plan = f.plan AND r.sample_id = f.sample_id) AND (f.key IS NULL OR f.key NOT IN "
            "(SELECT r.key FROM responses r WHERE r.plan = f.plan AND r.sample_id = f.sample_id)) "
            "ORDER BY f.id",
            (plan, *ids, RETRIED),
        )
        return {sample_id: FailedCall(*failed) for sample_id, *failed in rows}

    def failure_of(self, key: str) -> FailedCall | None:
        """The latest failure of the call with this key (e.g. a judge call), or None."""
        row = self._db.execute(
            f"SELECT status, error, {self._added('failures')} FROM failures "
            "WHERE key = ? AND status != ? ORDER BY id DESC LIMIT 1",
            (key, RETRIED),
        ).fetchone()
        return None if row is None else FailedCall(*row)

    def usage(self, plan: str) -> dict[str, int]:
        """Requests answered and tokens in/out over a plan's stored answers."""
        return self._usage("responses", "plan", plan)

    def count_responses(self) -> int:
        count: int = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        return count

    # the data rows (runner/data_identity.py): a run's rows are staged in a temporary table of
    # this connection, compared with the folder's in SQL, then added: no set of ids is held
    def stored_data(self) -> tuple[str, int] | None:
        """The data folder most of the kept rows were read from, and how many rows are kept;
        None when no run here read any."""
        count: int = self._db.execute("SELECT COUNT(*) FROM data_rows").fetchone()[0]
        if not count:
            return None
        folder = self._db.execute(
            "SELECT folder FROM data_rows GROUP BY folder ORDER BY COUNT(*) DESC LIMIT 1"
        ).fetchone()[0]
        return str(folder), count

    def stage_run_rows(self, rows: Iterable[tuple[str, str]]) -> int:
        """A run's rows (sample id, fingerprint; a repeated id keeps its last), to compare with
        the kept ones (`changed_run_rows`) and then keep (`keep_run_rows`); how many ids."""
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS run_rows "
            "(sample_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL)"
        )
        self._db.execute("BEGIN")
        try:
            self._db.execute("DELETE FROM run_rows")
            self._db.executemany("INSERT OR REPLACE INTO run_rows VALUES (?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        count: int = self._db.execute("SELECT COUNT(*) FROM temp.run_rows").fetchone()[0]
        return count

    def changed_run_rows(self, shown: int = 3) -> tuple[int, int, list[str]]:
        """(rows the staged run shares with the kept ones, how many of those have another
        fingerprint, the first `shown` of those ids in order)."""
        joined = "FROM temp.run_rows r JOIN data_rows d USING (sample_id)"
        shared, changed = self._db.execute(
            f"SELECT COUNT(*), COALESCE(SUM(r.fingerprint != d.fingerprint), 0) {joined}"
        ).fetchone()
        first = self._db.execute(
            f"SELECT r.sample_id {joined} WHERE r.fingerprint != d.fingerprint "
            "ORDER BY r.sample_id LIMIT ?",
            (shown,),
        )
        return int(shared), int(changed), [sample_id for (sample_id,) in first]

    def keep_run_rows(self, folder: str) -> None:
        """Keep the staged rows, read from `folder`, in one transaction (rows already kept keep
        their first record)."""
        self._write("BEGIN", ())
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO data_rows SELECT sample_id, fingerprint, ? "
                "FROM temp.run_rows",
                (folder,),
            )
        except sqlite3.OperationalError as e:
            self._db.execute("ROLLBACK")
            if is_full(e, self.path.parent):
                raise DiskFullError(self.path.parent) from e
            raise StoreError(f"{self.path}: {e}") from e
        self._write("COMMIT", ())


def _among(ids: Sequence[str] | None, column: str = "sample_id") -> tuple[str, Sequence[str]]:
    """The SQL condition (and its parameters) keeping rows whose `column` is in `ids` (or all)."""
    if ids is None:
        return "", ()
    if len(ids) > MAX_IDS:
        raise ValueError(f"at most {MAX_IDS} ids at a time, got {len(ids)}")
    return f" AND {column} IN ({', '.join('?' * len(ids))})", ids
