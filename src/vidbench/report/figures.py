"""Figures from a set of finished runs (matplotlib, PNG + SVG; the `plots` extra):

- bars: one figure per part of the task's table (`column_groups`, else all columns), one group of
  bars per column, one bar per run, with the 95% interval as error bars: 4D-Bench's per-subtask
  accuracy, MMWorld's per-discipline, per-facet and per-difficulty accuracy, AutoEval-Video's
  per-dimension accuracy, the caption metrics;
- curves: for runs that differ only in their number of views or of frames per view (the
  4D-Bench paper's Figs. 6 and 7, from `views-K` / `frames-N` variant runs), the Overall (or
  Average, else the first) column, or `--column`, against that number, one line per model;
- a benchmark's own figures (`FigureSpec` parts of its Benchmark value), drawn when its runs fit
  them.

Hand-written on matplotlib because the figures are the papers' own layouts; the Agg backend
needs no display.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.benchmark import BenchmarkPart
from vidbench.core.errors import ConfigError
from vidbench.extras import require
from vidbench.report.combine import group_key
from vidbench.report.schema import Results
from vidbench.report.tables import incomplete_note, row_labels, table_parts

FIGURE_AXES = {"views": "views per object", "frames": "frames per view"}


@dataclass(frozen=True)
class FigureSpec(BenchmarkPart):
    """A benchmark part: a figure the benchmark draws from a set of finished runs (their results
    directories, whose files it reads through ResultsDir) into a folder: `draw(runs, folder)`
    returns the files written, none when the runs do not fit it (e.g. not a sweep of the knob it
    plots)."""

    name: str
    draw: Callable[[Sequence[Path], Path], list[Path]]


def all_figures(
    results: Sequence[Results],
    out: Path,
    specs: Sequence[FigureSpec] = (),
    column: str | None = None,
    runs: Sequence[Path] = (),
) -> list[Path]:
    """The bars, the views/frames curve when the runs are such a sweep, and every benchmark
    figure the runs (`runs`: their directories) fit; the paths written. Runs of different tasks
    or data (report/combine.py's groups) get their bars and curve in a folder each,
    `figures-1-<task>/`, ...: their columns and samples are not the same. A benchmark's figure
    is given every run (it pools what fits it, e.g. the 4D-Bench probe's runs of one dataset
    per knob value)."""
    keys = [group_key(r) for r in results]
    distinct = list(dict.fromkeys(keys))
    written: list[Path] = []
    for i, key in enumerate(distinct, start=1):
        members = [r for r, k in zip(results, keys, strict=True) if k == key]
        folder = out if len(distinct) == 1 else out / f"figures-{i}-{key[0]}"
        written += bar_figures(members, folder) + curve_figure(members, folder, column)
    for spec in specs:
        written += spec.draw(runs, out)
    return written


LABEL_WIDTH = 48  # characters of a legend entry's line: longer names wrap, never cut


def figure_text(text: str, width: int | None = None) -> str:
    """`text` as matplotlib shows it as it is: `$` escaped (it would start math mode, eating
    the dollars of a name such as `$x$`), wrapped at `width` characters when given (a long
    model name wraps onto more lines instead of squeezing the plot or being cut)."""
    lines = textwrap.wrap(text, width) if width else [text]
    return "\n".join(lines).replace("$", r"\$")


def new_figure(width: float, height: float, what: str = "figures") -> Any:
    """A matplotlib figure on the Agg backend (no display), with the `plots` extra checked."""
    require(what, ["matplotlib"], "plots")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def save_figure(figure: Any, stem: Path) -> list[Path]:
    """`stem`.png and `stem`.svg; the paths written."""
    figure.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        figure.savefig(path, dpi=150)
        written.append(path)
    return written


def bar_figures(results: Sequence[Results], out: Path) -> list[Path]:
    """One bar figure per part of the table; the paths written."""
    labels = row_labels(results)
    written: list[Path] = []
    for index, (title, columns) in enumerate(table_parts(results), start=1):
        figure = new_figure(max(8.0, 0.9 * len(columns) * max(1, len(results)) ** 0.5 + 5), 4.2)
        axes = figure.subplots()
        width = 0.8 / max(1, len(results))
        for i, (r, label) in enumerate(zip(results, labels, strict=True)):
            points, missing = [], []
            for x, (c, error) in enumerate(zip(columns, _error_bars(r, columns), strict=True)):
                value, at = r.columns.get(c), x - 0.4 + width * (i + 0.5)
                if value is None or not math.isfinite(value):
                    missing.append(at)  # no sample, or no number: not a bar of height 0
                else:
                    points.append((at, value, error))
            xs, heights, errors = zip(*points, strict=True) if points else ((), (), ())
            axes.bar(
                xs,
                heights,
                width,
                label=figure_text(label, LABEL_WIDTH),  # every run in the legend, even barless
                yerr=[[e[0] for e in errors], [e[1] for e in errors]],
                capsize=2,
                hatch="//" if incomplete_note(r) else None,  # as its label says
            )
            for at in missing:
                axes.text(at, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize="x-small")
        ticks = [figure_text(c) for c in columns]
        axes.set_xticks(range(len(columns)), ticks, rotation=30, ha="right", fontsize="small")
        axes.set_title(figure_text(title or results[0].task.partition(":")[0]))
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        written += save_figure(figure, out / f"bars-{index}")
    return written


def _error_bars(result: Results, columns: Sequence[str]) -> list[tuple[float, float]]:
    """(below, above) the bar for each column's 95% interval; zero where there is none."""
    bars = []
    for c in columns:
        value, ci = result.columns.get(c), result.ci95.get(c)
        bars.append((value - ci[0], ci[1] - value) if value is not None and ci else (0.0, 0.0))
    return bars


def sweep_axis(results: Sequence[Results]) -> str | None:
    """ "views" or "frames" when the runs vary in exactly that (a views-K or frames-N sweep)."""
    for axis in FIGURE_AXES:
        counts = {_count(r, axis) for r in results}
        if len(counts) > 1:
            return axis
    return None


def _count(result: Results, axis: str) -> int:
    spec = result.frame_spec or {}
    views, frames = spec.get("views"), spec.get("frames")
    if axis == "views":
        return len(views) if isinstance(views, list) else 0
    return frames if isinstance(frames, int) else 0


def curve_figure(results: Sequence[Results], out: Path, column: str | None) -> list[Path]:
    """The chosen column against the number of views or frames, a line per model; [] when the
    runs are not such a sweep."""
    axis = sweep_axis(results)
    if axis is None:
        return []
    names = list(dict.fromkeys(c for r in results for c in r.columns))
    if column is not None and column not in names:
        raise ConfigError(f"--column {column!r}: the runs have no such column ({', '.join(names)})")
    column = column or next((c for c in ("Overall", "Average") if c in names), names[0])
    lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
    gaps: dict[str, list[tuple[int, float]]] = defaultdict(list)  # points of incomplete runs
    for r in results:
        value = r.columns.get(column)
        if value is not None:
            lines[str(r.model)].append((_count(r, axis), value))
            if incomplete_note(r):
                gaps[str(r.model)].append((_count(r, axis), value))
    figure = new_figure(8.5, 4.0)
    axes = figure.subplots()
    for model, points in sorted(lines.items()):
        xs, ys = zip(*sorted(points), strict=True)
        label = model
        if gaps[model]:  # hollow points, and the legend says where
            at = ", ".join(str(x) for x, _ in sorted(gaps[model]))
            label += f" (incomplete at {axis} {at}: hollow)"
        (line,) = axes.plot(xs, ys, marker="o", label=figure_text(label, LABEL_WIDTH))
        if gaps[model]:
            hollow_x, hollow_y = zip(*gaps[model], strict=True)
            axes.plot(hollow_x, hollow_y, "o", markerfacecolor="white", color=line.get_color())
    axes.set_xlabel(FIGURE_AXES[axis])
    axes.set_ylabel(figure_text(column))
    axes.set_title(figure_text(f"{column} vs {FIGURE_AXES[axis]}"))
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the lines
    name = re.sub(r"[^\w.]+", "-", column.lower()).strip("-.") or "column"  # no `/` nor `..`
    return save_figure(figure, out / f"{name}-vs-{axis}")
