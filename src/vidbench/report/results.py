"""Sample rows -> results.json: the paper table's columns, intervals, errors, provenance, every
number at full precision (report/tables.py rounds where a table is shown)."""

from __future__ import annotations

import platform
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.records import batched
from vidbench.core.requests import UNKNOWN_USAGE_KEY, usage_unknown
from vidbench.report.schema import SCHEMA_VERSION, Results, SampleRow
from vidbench.scoring.stats import bootstrap_ci, mean_percent
from vidbench.tasks.base import Returned, Task, call_task_code
from vidbench.tasks.tally import ColumnTally

_PACKAGES = ("vidbench", "av", "numpy", "pillow")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def git_commit() -> str | None:
    """The commit of the vidbench checkout this code runs from (None when not a checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


# Rows tallied at a time by build_results: read, counted and dropped before the next batch.
ROW_BATCH = 1000


def task_code(task: Task, method: str, call: Callable[[], Returned]) -> Returned:
    """`call()`, one of the task's own results methods (a plugin's code); an exception it
    raises stops the results with a ConfigError naming the task, its code and the method (no
    results.json is written: the folder keeps the one an earlier scoring wrote, if any). The
    answers are in the store: once the code is fixed, the same command scores them again
    without asking the model."""

    def stopped(said: str) -> ConfigError:
        return ConfigError(
            f"{said}, so no results were written; the answers are kept: once it is fixed, the "
            "same command scores them and writes the results, asking the model nothing"
        )

    return call_task_code(task, method, call, stopped)


def needs_whole_set(task: Task) -> bool:
    """Whether the task's results need every scored row at once (its own corpus columns, e.g.
    corpus BLEU, or results fields from `extra_results` rather than a `results_tally`);
    otherwise each column's values are gathered batch by batch and no row is kept."""
    kind = type(task)
    whole_extra = kind.extra_results is not Task.extra_results and (
        task_code(task, "results_tally()", task.results_tally) is None
    )
    return kind.corpus_columns is not Task.corpus_columns or whole_extra


class RowTally:
    """What results.json needs of the rows, gathered a batch at a time: the counts, the failed
    rows, each column's values (8 bytes a value) and the task's own fields (its
    `results_tally`); the scored rows themselves only for a task that `needs_whole_set`. A
    column's values come out in the rows' order, as `task.column_values` over all rows at once
    gives them (it reads each row on its own)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.n = 0
        self.n_scored = 0
        self.unparsed = 0
        self.truncated = 0  # answers that stopped at the model's token limit
        self.failed: list[SampleRow] = []
        self.scored: list[SampleRow] | None = [] if needs_whole_set(task) else None
        self.extra = (
            None
            if self.scored is not None
            else task_code(task, "results_tally()", task.results_tally)
        )
        self._columns = ColumnTally()
        # the columns a task always has, in its order
        self._columns.add(task_code(task, "column_values()", lambda: task.column_values([])))

    def add(self, rows: Sequence[SampleRow]) -> None:
        scored = [row for row in rows if not row.failed]
        self.n += len(rows)
        self.n_scored += len(scored)
        self.unparsed += sum(1 for row in scored if row.unparsed)
        self.truncated += sum(1 for row in rows if row.truncated)
        self.failed += [row for row in rows if row.failed]
        if self.scored is not None:
            self.scored += scored
            return
        self._columns.add(
            task_code(self.task, "column_values()", lambda: self.task.column_values(scored))
        )
        if (extra := self.extra) is not None:
            task_code(self.task, "results_tally().add()", lambda: extra.add(scored))

    def passing(self, rows: Iterable[SampleRow]) -> Iterator[SampleRow]:
        """`rows`, each handed on as it comes and tallied ROW_BATCH at a time (so the score
        stage's rows are tallied as they are written, not read back)."""
        batch: list[SampleRow] = []
        for row in rows:
            yield row
            batch.append(row)
            if len(batch) == ROW_BATCH:
                self.add(batch)
                batch = []
        self.add(batch)

    def values(self) -> Mapping[str, Sequence[float]]:
        if (scored := self.scored) is None:
            return self._columns.values
        return task_code(self.task, "column_values()", lambda: self.task.column_values(scored))

    def extra_fields(self, values: Mapping[str, Sequence[float]]) -> Mapping[str, Json]:
        """The task's own results fields: from its tally, or its `extra_results` over every
        row."""
        if (extra := self.extra) is not None:
            return task_code(self.task, "results_tally().fields()", lambda: extra.fields(values))
        if (scored := self.scored) is None:
            return {}
        return task_code(self.task, "extra_results()", lambda: self.task.extra_results(scored))


def build_results(
    task: Task,
    model: Mapping[str, Json],
    rows: Iterable[SampleRow] | RowTally,
    extra: Mapping[str, object] | None = None,  # more Results fields (validated with the rest)
    seed: int = 0,
) -> Results:
    """The results of scored rows, every number at full precision (tables round them). The
    rows are read ROW_BATCH at a time (`rows` may be a generator), or were tallied already."""
    if isinstance(rows, RowTally):
        tally = rows
    else:
        tally = RowTally(task)
        for batch in batched(rows, ROW_BATCH):
            tally.add(batch)
    scored = tally.scored or []
    failed = tally.failed
    values = tally.values()
    table = task.table
    columns = table.shown_columns(values)
    groups = table.shown_groups(values)
    corpus = (
        task_code(task, "corpus_columns()", lambda: task.corpus_columns(scored))
        if tally.scored is not None
        else {}
    )
    return Results.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "task": task.name,
            "model": model.get("spec"),
            "model_identity": model,
            "protocol": task.protocol,
            "frame_spec": task.frame_spec.as_dict(),
            "generation": task.generation.as_dict(),
            "n": tally.n,
            "n_scored": tally.n_scored,
            "errors": len(failed),
            "errors_by_status": dict(Counter(row.status for row in failed)),
            "error_details": [_error_detail(row) for row in failed],
            "unparsed": tally.unparsed,
            "truncated": tally.truncated,
            **_unjudged(task, failed),
            "columns": {
                c: corpus[c] if c in corpus else _scaled_mean(values[c], table.scale_of(c))
                for c in columns
            },
            "column_n": {c: len(values[c]) for c in columns},
            "column_scale": {c: table.scale_of(c) for c in columns},
            "ci95": {
                c: None if c in corpus else _scaled_ci(values[c], table.scale_of(c), seed)
                for c in columns
            },
            **({"column_groups": groups} if groups else {}),
            "versions": versions(),
            "git_commit": git_commit(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **tally.extra_fields(values),
            **(extra or {}),
        }
    )


def _unjudged(task: Task, failed: Sequence[SampleRow]) -> dict[str, int]:
    """For judged tasks, the answers a new judge stage can still decide (a failed or missing
    judge call, not one the API refused and would refuse again as it is: something must change
    first): `no_verdict_message` tells the user to run it."""
    if not task.uses_judge:
        return {}
    return {"unjudged": sum(1 for row in failed if row.verdict_absent and not row.change_first)}


def _error(row: SampleRow) -> str:
    return row.error or row.status_detail or row.status


def _error_detail(row: SampleRow) -> dict[str, str]:
    """A row not scored, as results.json's `error_details` has it: what must change first
    only where its call was rejected."""
    detail = {"id": row.id, "status": row.status, "error": _error(row)}
    if row.change_first is not None:
        detail["change_first"] = row.change_first
    return detail


def _scaled_mean(values: Sequence[float], scale: float) -> float | None:
    """Mean in percent, or times `scale` (e.g. 3.507 on a 0..5 scale); unrounded."""
    if scale == 100:
        return mean_percent(values)
    return None if not len(values) else float(np.mean(values)) * scale


def _scaled_ci(values: Sequence[float], scale: float, seed: int) -> list[float] | None:
    """The 95% bootstrap interval in the column's unit; unrounded."""
    pair = bootstrap_ci(values, seed=seed)
    if pair is None:
        return None
    if scale == 100:
        return [pair[0], pair[1]]
    return [pair[0] * scale / 100, pair[1] * scale / 100]


def usage_warning(results: Results) -> list[str]:
    """What the report says of calls whose reply reported no usage (none when every call's
    did): results.json's usage, and its cost, count them as 0 tokens, a lower bound."""
    usage = results.usage or {}
    judge = usage.get("judge")
    records = [usage, judge if isinstance(judge, dict) else {}]
    calls = sum(n for r in records if isinstance(n := r.get(UNKNOWN_USAGE_KEY), int))
    if not calls:
        return []
    return [
        f"{usage_unknown(calls)}: usage in results.json (and its cost) is a lower bound "
        f"({UNKNOWN_USAGE_KEY} counts the calls)"
    ]


def truncation_warning(results: Results) -> list[str]:
    """What the report says of answers that stopped at the model's token limit (none when no
    answer did): they are scored as they are, so a score may count cut answers."""
    if not results.truncated:
        return []
    limit = (results.generation or {}).get("max_tokens")
    answers = "1 answer" if results.truncated == 1 else f"{results.truncated} answers"
    return [
        f"{answers} stopped at the token limit (max_tokens={limit}) and may be cut short; "
        "they are scored as they are and marked `truncated` in samples.jsonl "
        "(--max-tokens sets the limit)"
    ]
