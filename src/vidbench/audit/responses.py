"""The runs of one benchmark read into one response table: per item its option letters, gold
and text; per run (a model) its outcome and chosen letter on each item.

Rows come from each run's samples.jsonl through ResultsDir (outcome, parsed, gold); the items'
options and text from the run's task loading its data (the same data for every run). A run is
blind when its model is `blind:SPEC` (run.json's model spec, or its identity's `blind` mark).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.records import Sample
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.base import Task
from vidbench.tasks.data import data_folder, load_samples


@dataclass(frozen=True)
class Item:
    id: str
    text: str  # the question and its options (near-duplicate search); "" when there is none
    choices: tuple[str, ...]  # option letters; () for open-ended items
    gold: str | None  # the letter the runs were scored against (open-ended: None)

    @property
    def chance(self) -> float:
        """A guesser's expected accuracy: 1/K for K options, 0 for an open-ended item."""
        return 1 / len(self.choices) if self.choices else 0.0


@dataclass(frozen=True)
class Run:
    path: Path
    label: str
    model: str
    blind: bool
    rows: dict[str, SampleRow]


@dataclass
class Responses:
    task: str
    items: list[Item]
    runs: list[Run]
    notes: list[str] = field(default_factory=list)
    # items people kept after reviewing these flag kinds (the data's record: Task.reviewed)
    reviewed: dict[str, frozenset[str]] = field(default_factory=dict)

    def correct(self) -> np.ndarray:
        """runs x items: 1 right, 0 wrong, NaN not graded (no answer, no verdict, no row)."""
        table = np.full((len(self.runs), len(self.items)), np.nan)
        for r, run in enumerate(self.runs):
            for i, item in enumerate(self.items):
                row = run.rows.get(item.id)
                if row is not None and row.outcome.graded:
                    table[r, i] = 1.0 if row.outcome.kind == "correct" else 0.0
        return table

    def answer(self, run: Run, item: Item) -> str | None:
        """The option letter the run chose (None: open-ended, no answer or unreadable)."""
        row = run.rows.get(item.id)
        if row is None or not row.outcome.graded or row.parsed not in item.choices:
            return None
        return row.parsed

    @property
    def seeing(self) -> list[int]:
        return [r for r, run in enumerate(self.runs) if not run.blind]

    @property
    def blind(self) -> list[int]:
        return [r for r, run in enumerate(self.runs) if run.blind]


def is_blind(config: RunConfig) -> bool:
    identity = config.model_identity or {}
    return config.model.startswith("blind:") or bool(identity.get("blind"))


def _item(sample: Sample, task: Task, rows: Sequence[SampleRow]) -> Item:
    choices = task.choices(sample) if sample.kind == "mcq" else ()
    golds = {row.gold for row in rows if row.gold is not None}
    gold = sorted(golds)[0] if golds else sample.answer
    if len(choices) == len(sample.options):
        options = "\n".join(f"{c}. {o}" for c, o in zip(choices, sample.options, strict=True))
    else:
        options = "\n".join(sample.options)
    text = f"{sample.question or ''}\n{options}".strip()
    return Item(sample.id, text, tuple(choices), gold if choices else None)


def read_responses(paths: Sequence[Path]) -> Responses:
    """The runs at `paths` as one table; ConfigError when they are not runs of one task on the
    same data, or when their data cannot be loaded."""
    if len(paths) < 2:
        raise ConfigError("audit: give at least two runs of the same benchmark")
    seen: dict[Path, Path] = {}
    for path in paths:  # one run given twice would vote twice on every gold
        first = seen.setdefault(path.resolve(), path)
        if first is not path:
            same = "" if str(first) == str(path) else f" (as {first} and {path})"
            raise ConfigError(f"audit: the run {path} is given twice{same}")
    configs = [RunConfig.load(p) for p in paths]
    bases = [c.task.partition(":")[0] for c in configs]
    if len(set(bases)) != 1:
        raise ConfigError(f"audit: the runs are of different tasks ({_which(bases, paths)})")
    task = configs[0].open_task()
    folders = [str(data_folder(c.open_task(), c.data).resolve()) for c in configs]
    if len(set(folders)) != 1:
        raise ConfigError(f"audit: the runs are on different data ({_which(folders, paths)})")
    try:
        samples = load_samples(task, configs[0].data).items
        reviewed = task.reviewed(data_folder(task, configs[0].data))
    except VidbenchError as e:
        raise ConfigError(f"audit: the data of {paths[0]} cannot be loaded ({e})") from e
    runs = []
    for path, config in zip(paths, configs, strict=True):
        rows = {row.id: row for row in ResultsDir(path).read_samples()}
        spec = str((config.model_identity or {}).get("spec") or config.model)
        runs.append(Run(path, spec, config.model, is_blind(config), rows))
    labels = [run.label for run in runs]
    runs = [  # models of the same name told apart by their folder, as given (names may repeat)
        Run(r.path, f"{r.label} ({r.path})", r.model, r.blind, r.rows)
        if labels.count(r.label) > 1
        else r
        for r in runs
    ]
    answered = {i for run in runs for i in run.rows}
    _same_golds(runs, samples)
    items = [
        _item(s, task, [run.rows[s.id] for run in runs if s.id in run.rows])
        for s in samples
        if s.id in answered
    ]
    notes = _coverage(runs, [item.id for item in items])
    gone = sorted(answered - {s.id for s in samples})
    if gone:  # rows of an older version of the data: left out, said so
        notes.append(
            f"{len(gone)} item(s) the runs answered are no longer in the data (e.g. {gone[0]}) "
            "and are left out: score the runs again (`vidbench run` with the same --out)"
        )
    unasked = [s.id for s in samples if s.id not in answered]
    if unasked:
        notes.append(
            f"{len(unasked)} item(s) of the data no run answered (e.g. {unasked[0]}): not audited"
        )
    gold = {item.id: item.gold for item in items}
    changed = [s.id for s in samples if s.kind == "mcq" and s.id in gold and s.answer != gold[s.id]]
    if changed:
        notes.append(
            f"{len(changed)} item(s) have another gold in the data than the runs were scored "
            f"with (e.g. {changed[0]}): score the runs again (`vidbench run` reuses the answers)"
        )
    return Responses(configs[0].task, items, runs, notes, reviewed)


def _which(values: Sequence[str], paths: Sequence[Path]) -> str:
    """Each value with the runs that have it: "custom: a, b; mmworld: c"."""
    runs: dict[str, list[str]] = {}
    for value, path in zip(values, paths, strict=True):
        runs.setdefault(value, []).append(str(path))
    return "; ".join(f"{value}: {', '.join(found)}" for value, found in sorted(runs.items()))


def _same_golds(runs: Sequence[Run], samples: Sequence[Sample]) -> None:
    """ConfigError when runs were scored against different golds of one item (some scored
    again after the data's gold changed, some not): their right and wrong disagree about what
    is right, and every figure of the audit would mix the two."""
    for sample in samples:
        if sample.kind != "mcq":
            continue
        scored = {
            run.path: row.gold
            for run in runs
            if (row := run.rows.get(sample.id)) is not None and row.gold is not None
        }
        if len(set(scored.values())) > 1:
            stale = [str(path) for path, gold in scored.items() if gold != sample.answer]
            golds = ", ".join(f"{gold} in {path}" for path, gold in scored.items())
            raise ConfigError(
                f"audit: the runs were scored against different golds of {sample.id} ({golds}; "
                f"the data has {sample.answer}): score {', '.join(stale)} again (`vidbench run` "
                "with the same --out reuses the answers)"
            )


def _coverage(runs: Sequence[Run], items: Sequence[str]) -> list[str]:
    """A note for each run without a graded answer on some of the items (a --limit run, one
    not finished, answers without a verdict): its accuracy is over the items it has.
    ConfigError when a run has no graded answer, or no item has graded answers from two runs:
    then nothing can be compared."""

    def graded(run: Run) -> list[str]:
        return [i for i in items if (row := run.rows.get(i)) is not None and row.outcome.graded]

    has = {run.path: graded(run) for run in runs}
    for run in runs:
        if not has[run.path]:
            rows = sum(1 for item in items if item in run.rows)
            raise ConfigError(
                f"audit: {run.path} has no graded answer on these items ({rows} row(s), none "
                "right or wrong: not finished, or no verdict; its results.json says why)"
            )
    counts = Counter(item for found in has.values() for item in found)
    if not any(n >= 2 for n in counts.values()):
        raise ConfigError(
            f"audit: the runs have no item in common ({len(items)} item(s) in all, each graded "
            "in one run): give runs over the same items"
        )
    return [
        f"{run.label} has a graded answer on {len(has[run.path])} of the {len(items)} items (a "
        "--limit run, one not finished, or answers without a verdict?): its accuracy is over "
        f"those {len(has[run.path])} only"
        for run in runs
        if len(has[run.path]) < len(items)
    ]
