"""Accuracy against each knob of the probe, from finished runs on probe data.

The runs' samples.jsonl rows carry each question's knob fields (`probe`, from probe.jsonl); the
rows of every run of a model are pooled, so a sweep may be one dataset whose objects spread a
knob's values (`--occluders 0,1,2,3`) or one dataset per value (one run each). For every knob
that takes more than one value over the pooled rows: one figure, a panel for all questions and
one per subtask, accuracy (percent) against the knob's value with 95% percentile-bootstrap
intervals (scoring/stats.py), a line per model; and a CSV of the same numbers.

`knob_figures(results, out)` is what `vidbench figures` calls for the 4D-Bench probe (a
`FigureSpec` part of 4D-Bench's Benchmark value); it writes nothing for runs without probe fields.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.benchmarks.fourd.loader import SUBTASKS
from vidbench.benchmarks.fourd.probe.knobs import KNOB_NAMES
from vidbench.benchmarks.fourd.qa_task import SUBTASK
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines, write_text
from vidbench.report.figures import new_figure, save_figure
from vidbench.report.results_dir import SAMPLES_FILE, ResultsDir, typed
from vidbench.report.schema import SampleRow
from vidbench.scoring.stats import bootstrap_ci

ALL = "All questions"
LABELS = {
    "parts": "parts per object",
    "occluders": "occluders",
    "lookalikes": "look-alike parts",
    "motion_size": "motion size (x default)",
    "motion_speed": "motion speed (x default)",
    "camera_jitter": "camera jitter (x default)",
    "input_views": "views in the input",
}

Point = tuple[float, float, float, float, int]  # value, accuracy, low, high, questions


@dataclass(frozen=True)
class ProbeRow:
    """A scored question of a probe run: its knob values, subtask, and whether it was right."""

    knobs: dict[str, float]
    subtask: str
    correct: bool


def _probe_row(row: SampleRow) -> ProbeRow | None:
    """The row's probe fields (its `probe` detail), when it is a graded probe question."""
    probe = row.details.get("probe")
    subtask = row.groups.get(SUBTASK)
    if not isinstance(probe, dict) or row.correct is None or not isinstance(subtask, str):
        return None
    knobs = {
        k: float(v)
        for k, v in probe.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }
    return ProbeRow(knobs, subtask, row.correct)


def _probe_rows_of(samples: Path) -> list[ProbeRow]:
    """The probe rows of a samples.jsonl, read a line at a time (a large run's rows are never
    all in memory); only the lines with probe fields are read as rows (`vidbench view` draws
    this figure for every run)."""
    found = []
    for line in json_lines(samples):
        if line.error is not None:
            raise DataError(f"{line.where(samples)}: {line.error}")
        details = line.value.get("details") if isinstance(line.value, dict) else None
        if isinstance(details, dict) and "probe" in details:
            row = _probe_row(typed(SampleRow, line.value, line.where(samples)))
            if row is not None:
                found.append(row)
    return found


def probe_rows(results: Sequence[Path]) -> dict[str, list[ProbeRow]]:
    """Scored rows with probe fields, by model, over the given results directories (or
    results.json files)."""
    rows: dict[str, list[ProbeRow]] = defaultdict(list)
    for path in results:
        folder = ResultsDir(path if path.is_dir() else path.parent)
        model = str(folder.read_results().model)
        samples = folder.file(SAMPLES_FILE)
        if not samples.is_file():
            continue
        rows[model] += _probe_rows_of(samples)
    return {m: r for m, r in rows.items() if r}


def swept(rows: dict[str, list[ProbeRow]]) -> list[str]:
    """The knobs that take more than one value over all rows."""
    return [k for k in KNOB_NAMES if len(knob_values(rows, k)) > 1]


def curve(rows: Sequence[ProbeRow], knob: str, subtask: str) -> list[Point]:
    """(value, accuracy, low, high, n) per knob value, over the rows of one subtask (or all)."""
    by_value: dict[float, list[float]] = defaultdict(list)
    for r in rows:
        if knob in r.knobs and subtask in (ALL, r.subtask):
            by_value[r.knobs[knob]].append(float(r.correct))
    points = []
    for value in sorted(by_value):
        scores = by_value[value]
        low, high = bootstrap_ci(scores) or (0.0, 0.0)
        points.append((value, 100.0 * sum(scores) / len(scores), low, high, len(scores)))
    return points


def knob_figures(results: Sequence[Path], out: Path) -> list[Path]:
    """knob-<name>.png/.svg/.csv for each swept knob; the paths written ([] for runs without
    probe fields)."""
    rows = probe_rows([Path(r) for r in results])
    written: list[Path] = []
    for knob in swept(rows):
        values = knob_values(rows, knob)
        figure = new_figure(11.0, 6.5, "vidbench figures (probe knobs)")
        axes = figure.subplots(2, 3, sharex=True, sharey=True).ravel()
        table = io.StringIO()
        writer = csv.writer(table, lineterminator="\n")
        writer.writerow(["model", "subtask", knob, "questions", "accuracy", "low", "high"])
        for panel, ax in zip([ALL, *SUBTASKS], axes, strict=True):
            for number, (model, model_rows) in enumerate(sorted(rows.items())):
                points = curve(model_rows, knob, panel)
                _draw(ax, points, _dodge(values, len(rows), number), _short(model))
                for x, y, lo, hi, n in points:
                    writer.writerow([model, panel, x, n, f"{y:.2f}", f"{lo:.2f}", f"{hi:.2f}"])
            ax.set_title(panel, fontsize="medium")
            ax.set_xticks(values)
            ax.set_ylim(-5, 105)
            ax.grid(alpha=0.3)
        for ax in axes[3:]:
            ax.set_xlabel(LABELS[knob])
        for ax in axes[::3]:
            ax.set_ylabel("accuracy (%)")
        axes[0].legend(fontsize="small", loc="upper right", framealpha=0.8)
        figure.suptitle(f"4D probe: accuracy against {LABELS[knob]} (95% intervals)")
        written += save_figure(figure, out / f"knob-{knob}")
        write_text(out / f"knob-{knob}.csv", table.getvalue())
        written.append(out / f"knob-{knob}.csv")
    return written


def _draw(ax: Any, points: list[Point], shift: float, label: str) -> None:
    """One model's line with its intervals, shifted sideways by ``shift`` so that models with
    equal accuracy (constant and a blind model answering one letter) stay visible."""
    if not points:
        return
    xs = [p[0] + shift for p in points]
    errors = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
    ax.errorbar(xs, [p[1] for p in points], yerr=errors, marker="o", capsize=3, label=label)


def knob_values(rows: dict[str, list[ProbeRow]], knob: str) -> list[float]:
    """The knob's values over all rows, in order."""
    return sorted({r.knobs[knob] for model in rows.values() for r in model if knob in r.knobs})


def _dodge(values: list[float], models: int, number: int) -> float:
    """Sideways shift of model ``number``: a small share of the step between knob values."""
    step = min((b - a for a, b in itertools.pairwise(values)), default=1.0)
    return (number - (models - 1) / 2) * 0.04 * step


def _short(model: str) -> str:
    """`python:package.module:Class` as `python:Class` (the legend's width); others as given."""
    if model.startswith("python:") and model.count(":") == 2:
        return "python:" + model.rsplit(":", 1)[1]
    return model
