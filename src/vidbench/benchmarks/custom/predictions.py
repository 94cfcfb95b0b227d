"""`vidbench predictions RESULTS --out FILE`: a declared benchmark's run as the model's answers,
keyed by each row's id and written the way the benchmark's own file writes its answers (an index
counted from `index_base`, a letter, or the option's text; open-ended: the reply), as a JSON
object {id: answer} or a CSV with the id and answer columns: what a leaderboard's submission
server takes for a test split whose answers are not public.

The answer format is `answer_format` when the file names one; with `auto`, the one the rows' gold
answers are written in (every row with a gold answer must agree), else `--format`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import gold, paths
from vidbench.benchmarks.custom.spec import Spec
from vidbench.benchmarks.custom.task import DeclaredTask
from vidbench.core.errors import ConfigError
from vidbench.core.files import json_text, write_text
from vidbench.core.records import Sample
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.scoring.choices import option_letters
from vidbench.tasks.base import Task
from vidbench.tasks.data import load_samples

FORMATS = ("index", "letter", "text")
SUFFIXES = (".json", ".csv")


@dataclass(frozen=True)
class Written:
    path: Path
    rows: int
    empty: list[str]  # ids without an answer the model gave (no reply, or none read from it)
    answer_format: str
    unloaded: int  # rows that could not be loaded (bad rows): not in the file


def answer_format(spec: Spec, samples: Sequence[Sample], given: str | None) -> str:
    """How the benchmark's file writes its answers (see the module's docstring)."""
    if given is not None:
        return given
    if spec.answer_format != "auto":
        return spec.answer_format
    assert spec.answer is not None
    found: dict[str, str] = {}
    for sample in samples:
        value = paths.lookup(sample.metadata, spec.answer)
        if sample.answer is None or not gold.has_gold(value):
            continue
        choices = gold.choices_of(sample.metadata, spec.options, spec.empty_options)
        written = [""] * choices.written
        for position, text in zip(choices.positions, choices.texts, strict=True):
            written[position] = text
        reading = gold.reading_of(value, written, spec.index_base)
        if reading is not None:
            found.setdefault(reading, sample.id)
    if len(found) == 1:
        return next(iter(found))
    if not found:
        why = "no row has a gold answer to show how the file writes its answers"
    else:
        why = "the rows' gold answers are written as " + " and as ".join(
            f"{reading}s (e.g. {sample_id})" for reading, sample_id in found.items()
        )
    raise ConfigError(f"{why}: give --format {' | '.join(FORMATS)}")


def _answer(sample: Sample, row: SampleRow | None, spec: Spec, form: str) -> Any:
    """The model's answer in the file's format; None when it gave none."""
    if row is None or row.failed or row.raw_output is None:
        return None
    if not spec.multiple_choice:
        return row.raw_output.strip()
    if row.parsed is None:
        return None
    letters = option_letters(len(sample.options))
    k = letters.index(row.parsed)
    if form == "letter":
        return row.parsed
    if form == "text":
        return sample.options[k]
    choices = gold.choices_of(sample.metadata, spec.options, spec.empty_options)
    return choices.positions[k] + spec.index_base


def _column(path: str | None, default: str) -> str:
    return path if path is not None and paths.plain_name(path) else default


def write_predictions(
    task: Task, data: str, results: Path, out: Path, given: str | None = None
) -> Written:
    if not isinstance(task, DeclaredTask):
        raise ConfigError(
            f"{results} is a run of {task.name}: `vidbench predictions` writes a declared "
            "benchmark's answers in its own file's format (custom:DIR)"
        )
    if out.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"{out}: write predictions to a .json or a .csv file")
    spec = task.spec
    loaded = load_samples(task, data)
    samples = loaded.items
    form = answer_format(spec, samples, given) if spec.multiple_choice else "text"
    rows = {row.id: row for row in ResultsDir(results).read_samples()}
    answers = {s.id: _answer(s, rows.get(s.id), spec, form) for s in samples}
    key, value = _column(spec.id, "id"), _column(spec.answer, "answer")
    if out.suffix.lower() == ".json":
        text = json_text(answers)
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([key, value])
        writer.writerows([i, "" if a is None else a] for i, a in answers.items())
        text = buffer.getvalue()
    write_text(out, text)
    empty = [i for i, a in answers.items() if a is None]
    return Written(out, len(answers), empty, form, len(loaded.problems))
