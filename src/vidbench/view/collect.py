"""Read finished runs for `vidbench view`: everything a results directory holds, as typed
records, with every missing piece turned into a message rather than an error (a report of an
older or partly moved run still shows what it has).

What comes from where: results.json (the table row), samples.jsonl (per-sample outcome and raw
output; read a line at a time: the run keeps where each row is and what the page filters by,
and the report reads the rows again a chunk at a time), run.json (the task, the data folder,
the frame cache), store.sqlite opened read-only (failed judge calls; build.py reads the judge's
prompts and replies of every attempt and the exact prompts a row at a time), and the run's own
task loading its data (question, options, gold answer, the videos).

It reads runner/ (the store, run.json) and report/ (results, table labels): view/ sits above
both (docs/architecture.md).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.core.errors import DataError, VidbenchError
from vidbench.core.records import Sample
from vidbench.report.combine import group_key
from vidbench.report.results_dir import (
    RESULTS_FILE,
    SAMPLES_FILE,
    SCORED_FILE,
    ResultsDir,
    sample_rows_at,
    sample_rows_with_offsets,
)
from vidbench.report.schema import Results, SampleRow
from vidbench.report.tables import row_labels
from vidbench.runner.data_identity import data_changed
from vidbench.runner.model_calls import CALL_PLAN
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store, StoredFailure
from vidbench.tasks.base import Task
from vidbench.tasks.data import data_folder, load_samples


@dataclass(frozen=True, slots=True)  # slots: one per sample of the report
class RowInfo:
    """What the report keeps of a run's row between reading it and reading it again: where it
    is (a byte offset in samples.jsonl, or an index in `RunData.records`), what the page sorts
    and filters by, and its prompt's hash."""

    at: int
    outcome: str
    parsed: str | None
    prompt_hash: str | None


@dataclass
class RunData:
    """One results directory as the report sees it; `messages` says what could not be read.
    Its rows are in `samples_file` (read a line at a time), or, for a run built in code, in
    `records`."""

    path: Path
    label: str = ""
    results: Results | None = None
    records: list[SampleRow] = field(default_factory=list)
    samples_file: Path | None = None
    config: RunConfig | None = None
    task: Task | None = None
    samples: dict[str, Sample] = field(default_factory=dict)
    judge_failures: dict[str, list[StoredFailure]] = field(default_factory=dict)  # by sample id
    messages: list[str] = field(default_factory=list)
    rows_read: int = 0  # rows in samples.jsonl (a sample written twice counts twice)
    rows_edited: bool = False  # samples.jsonl is not the file the score stage wrote
    # the task (without variants) and data its samples are of: runs of one key share samples,
    # runs of two never do, even where ids coincide ("questions-3" of two declared benchmarks)
    data_key: str = ""
    _index: dict[str, RowInfo] | None = field(default=None, repr=False)

    def note(self, message: str) -> None:
        self.messages.append(f"{self.path}: {message}")

    def index(self) -> dict[str, RowInfo]:
        """Every sample id of the run (in order of first appearance) and its last row's
        `RowInfo`; read once (DataError: a line that is not JSON, or not a sample row)."""
        if self._index is None:
            found: dict[str, RowInfo] = {}
            count = 0
            for at, row in self._scan():
                found[row.id] = RowInfo(at, row.outcome.label, row.parsed, row.prompt_hash)
                count += 1
            self._index, self.rows_read = found, count
        return self._index

    def _scan(self) -> Iterator[tuple[int, SampleRow]]:
        if self.samples_file is not None:
            return sample_rows_with_offsets(self.samples_file)
        return enumerate(self.records)

    def rows_at(self, infos: Sequence[RowInfo]) -> list[SampleRow]:
        """The rows `infos` point at, read again."""
        if self.samples_file is not None:
            return sample_rows_at(self.samples_file, [info.at for info in infos])
        return [self.records[info.at] for info in infos]


def owner_of(item: str, ids: set[str]) -> str | None:
    """The sample a judge call's item belongs to: the item itself, or its longest prefix before
    a ':' that is a sample id ("<id>:judge", "<uid>:appearance")."""
    candidate = item
    while candidate:
        if candidate in ids:
            return candidate
        candidate = candidate.rpartition(":")[0]
    return None


def _read_store(run: RunData) -> None:
    """The failed judge calls of the run's samples (the judge's replies, like the exact prompts,
    are many: build.py writes them to the report a row at a time)."""
    try:
        store = Store.read_only(run.path)
    except VidbenchError as e:  # none, or not a readable database
        run.note(f"{e}: judge prompts and replies are not shown")
        return
    with store:
        try:
            ids = set(run.index())
            for failure in store.failures():
                judged = failure.plan.startswith(CALL_PLAN)
                owner = owner_of(failure.sample_id, ids) if judged else None
                if owner is not None:
                    run.judge_failures.setdefault(owner, []).append(failure)
        except sqlite3.Error as e:  # an older or damaged store: show the rest
            run.note(f"store.sqlite not readable ({e}): judge prompts and replies are not shown")


def _load_samples(run: RunData) -> None:
    """The run's task and its data's samples (questions, options, videos), when the data
    folder is still where the run found it."""
    if run.config is None:
        return
    try:
        run.task = run.config.open_task()
    except VidbenchError as e:
        run.note(f"task {run.config.task!r} not built ({e}): questions and frames are not shown")
        return
    try:
        data = data_folder(run.task, run.config.data)
    except VidbenchError as e:
        run.note(f"no data folder ({e}): questions and frames are not shown")
        return
    if not data.exists():
        run.note(f"data folder {data} not found (moved?): questions and frames are not shown")
        return
    try:
        loaded = load_samples(run.task, data)
    except VidbenchError as e:
        run.note(f"data folder {data} not readable ({e}): questions and frames are not shown")
        return
    run.samples = {s.id: s for s in loaded.items}
    # rows scored from other data show stale scores as current (rows edited since the score
    # stage: said already, and not the rows scored, so not compared)
    if run.samples_file is not None and not run.rows_edited:
        scored = [run.samples[i] for i in run.index() if i in run.samples]
        changed = data_changed(run.config, data, ResultsDir(run.path).stored_basis(), scored)
        if changed is not None:
            run.note(changed)
            if run.results is not None:  # its row says so, as `vidbench report`'s does
                run.results = run.results.marked_stale(changed)


def _check_scored(run: RunData, results_dir: ResultsDir) -> None:
    """Note when samples.jsonl is not the file the score stage wrote (cut, edited, replaced:
    its samples are not those results.json counts); a score stage of an older vidbench, which
    kept no digest, is not checked."""
    if run.samples_file is None or not results_dir.file(SCORED_FILE).is_file():
        return
    try:
        results_dir.scored_basis()
    except VidbenchError as e:
        run.note(f"{e}: the samples shown are not those the table was made from")
        run.rows_edited = True


def collect_run(path: Path, with_samples: bool = True) -> RunData:
    """Everything the report shows of one results directory; what is missing is noted.
    `with_samples`: also build the run's task and load its data's samples (questions, options,
    videos)."""
    run = RunData(path)
    if not path.is_dir():
        run.note("not a directory")
        return run
    results_dir = ResultsDir(path)
    try:
        run.results = results_dir.read_results()
    except VidbenchError as e:
        missing = not (path / RESULTS_FILE).is_file()
        why = "run the report stage" if missing else str(e)
        run.note(f"no readable {RESULTS_FILE} ({why}): no table row")
    samples_file = results_dir.file(SAMPLES_FILE)
    if samples_file.is_file():
        run.samples_file = samples_file
        try:
            run.index()
        except DataError as e:  # a line that is not JSON, or not a sample row
            run.note(f"{SAMPLES_FILE} not readable ({e}): no samples to show")
            run.samples_file = None
        _check_scored(run, results_dir)
    elif (path / "run-1").is_dir():  # `vidbench run --runs N`: the samples are in its runs
        run.note(f"repeated runs: give {path / 'run-1'} ... to see their samples")
    else:
        run.note(f"no {SAMPLES_FILE} (run the score stage): no samples to show")
    try:
        run.config = RunConfig.load(path)
    except VidbenchError as e:  # run.json that does not fit the schema
        run.note(f"run.json not readable ({e}): questions and frames are not shown")
    _read_store(run)
    if with_samples:
        _load_samples(run)
    run.data_key = _data_key(run)
    return run


def _data_key(run: RunData) -> str:
    """The run's `data_key`: its results' table group (report/combine.group_key), else its
    run.json's task and data; "" when neither is readable."""
    if run.results is not None:
        task, data = group_key(run.results)
    elif run.config is not None:
        task = run.config.task.partition(":")[0]
        data = os.path.abspath(run.config.data) if run.config.data else ""
    else:
        return ""
    return f"{task}\n{data}"


def collect_runs(paths: Sequence[Path], with_samples: bool = True) -> list[RunData]:
    runs = [collect_run(p, with_samples) for p in paths]
    _label(runs)
    return runs


def _label(runs: Sequence[RunData]) -> None:
    """Row labels as `vidbench report` prints them in the table of the runs' task and data
    (runs of other data are told apart by the page's line for each run, which names its task
    and folder, not by every difference of their settings); a run without results is named by
    its model or folder; labels that coincide get the folder name (the path as given where the
    folder names coincide too: a/run and b/run)."""
    labels: dict[int, str] = {}
    for members in _by_data(runs):
        results = [r.results for r in members if r.results]
        if len(results) == len(members):
            named = row_labels(results, number_repeats=False)
        else:
            named = [
                str((r.results.model if r.results else None)
                    or (r.config.model if r.config else r.path.name))
                for r in members
            ]  # fmt: skip
        labels.update((id(r), label) for r, label in zip(members, named, strict=True))
    ordered = [labels[id(r)] for r in runs]
    for run, label in zip(runs, told_apart(ordered, [r.path for r in runs]), strict=True):
        run.label = label


def _by_data(runs: Sequence[RunData]) -> list[list[RunData]]:
    """The runs by `data_key`, in order of first appearance."""
    grouped: dict[str, list[RunData]] = {}
    for run in runs:
        grouped.setdefault(run.data_key, []).append(run)
    return list(grouped.values())


def told_apart(labels: Sequence[str], folders: Sequence[Path]) -> list[str]:
    """`labels` (of the runs in `folders`), those that coincide followed by the run's folder
    name, or by its path as given where the folder names coincide too (a/run and b/run)."""
    told = []
    for label, path in zip(labels, folders, strict=True):
        names = [p.name for p, other in zip(folders, labels, strict=True) if other == label]
        folder = path.name if names.count(path.name) == 1 else str(path)
        told.append(label if len(names) == 1 else f"{label} ({folder})")
    return told
