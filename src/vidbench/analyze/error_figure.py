"""The error-type distribution as a figure (like the MMWorld paper's Figure 5): one group of
bars per error type, one bar per model, height = share of that model's tagged wrong answers.
Written as PNG and SVG with matplotlib's Agg backend (no display needed; the `plots` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vidbench.analyze.error_table import labels, share
from vidbench.analyze.taxonomy import CODES
from vidbench.report.figures import LABEL_WIDTH, figure_text, new_figure, save_figure

if TYPE_CHECKING:
    from vidbench.analyze.errors import ErrorSummary


def write_figure(summaries: Sequence[ErrorSummary], stem: Path) -> list[Path]:
    """`stem`.png and `stem`.svg; the paths written."""
    figure_width = max(6.0, 1.1 * len(CODES) + 0.4 * len(summaries))
    figure = new_figure(figure_width, 3.8, "the error figure")
    axes = figure.subplots()
    width = 0.8 / max(1, len(summaries))
    for i, (summary, name) in enumerate(zip(summaries, labels(summaries), strict=True)):
        heights = [share(summary, code) or 0.0 for code in CODES]
        offsets = [x - 0.4 + width * (i + 0.5) for x in range(len(CODES))]
        untyped, unscored = summary["wrong"] - summary["tagged"], summary["not_scored"]
        notes = [f"n={summary['tagged']}"] + [f"{untyped} untyped"] * bool(untyped)
        notes += [f"run incomplete: {unscored} not scored"] * bool(unscored)
        label = f"{name} ({', '.join(notes)})"
        axes.bar(offsets, heights, width, label=figure_text(label, LABEL_WIDTH))
    axes.set_xticks(range(len(CODES)), CODES)
    axes.set_ylabel("% of tagged wrong answers")
    axes.set_title("Error types of wrong answers")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the bars
    return save_figure(figure, stem)
