"""`vidbench figures`: bar figures per part of the table, and curves for views/frames sweeps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.report.figures import (
    FigureSpec,
    all_figures,
    bar_figures,
    curve_figure,
    sweep_axis,
)
from vidbench.report.schema import Results


def _result(model: str, views: list[int], frames: int = 6, overall: float = 50.0) -> Results:
    return Results.model_validate(
        {
            "task": f"4dbench-qa:views-{len(views)}",
            "model": model,
            "frame_spec": {"views": views, "frames": frames},
            "n": 10,
            "errors": 0,
            "columns": {"Action": overall - 5, "Overall": overall},
            "ci95": {"Action": [overall - 15, overall + 5], "Overall": None},
        }
    )


def test_views_sweep_gives_bars_and_a_curve(tmp_path: Path) -> None:
    runs = [_result("m", [0], overall=30), _result("m", [1, 8, 16], overall=40),
            _result("m", [0, 4, 8, 12, 16, 20], overall=45)]  # fmt: skip
    assert sweep_axis(runs) == "views"
    with pytest.raises(ConfigError, match="'Overal': the runs have no such column"):
        curve_figure(runs, tmp_path, "Overal")  # was an empty figure
    bars = bar_figures(runs, tmp_path)
    curves = curve_figure(runs, tmp_path, None)
    assert [p.name for p in bars] == ["bars-1.png", "bars-1.svg"]
    assert [p.name for p in curves] == ["overall-vs-views.png", "overall-vs-views.svg"]
    assert all(p.stat().st_size > 1000 for p in bars + curves)
    assert curves[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "views per object" in curves[1].read_text()  # the SVG's axis label


def test_no_sweep_no_curve_and_groups_give_a_figure_each(tmp_path: Path) -> None:
    same = [_result("a", [1, 8, 16]), _result("b", [1, 8, 16])]
    assert sweep_axis(same) is None and curve_figure(same, tmp_path, None) == []
    groups = {"T1": ["Action"], "T2": ["Overall"]}
    grouped = [r.model_copy(update={"column_groups": groups}) for r in same]
    assert len(bar_figures(grouped, tmp_path / "g")) == 4  # two parts, PNG and SVG each


def test_the_command_on_demo_runs(tmp_path: Path, qa_release: Path) -> None:
    outs = []
    for views in (1, 3):
        out = tmp_path / f"v{views}"
        args = ["--no-progress", "run", f"4dbench-qa:views-{views}", "--data", str(qa_release)]
        assert main([*args, "--model", "random", "--out", str(out)]) == 0
        outs.append(str(out))
    assert main(["figures", *outs, "--out", str(tmp_path / "figs")]) == 0
    names = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert names == ["bars-1.png", "bars-1.svg", "overall-vs-views.png", "overall-vs-views.svg"]


def test_runs_of_other_tasks_get_figures_each_and_labels_stay_whole(tmp_path: Path) -> None:
    """A 4D-Bench run and an MMWorld run given together: a folder of figures each (the first's
    columns used to draw the second's bars, none, and a 'curve' across the two benchmarks);
    a `$` in a name is text, not math (`$_$` stopped the command with a mathtext traceback); an
    incomplete run says so in the legend; a missing number is not drawn as a 0."""
    long_name = "openai-compat:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-72B-Instruct-AWQ-" * 2
    fourd = [_result("cost $_$", [0]), _result(long_name, [1, 8, 16])]
    other = _result("m", [0, 1], overall=10).model_copy(update={"task": "mmworld", "errors": 4})
    given: list[Sequence[Path]] = []  # a benchmark's figure gets every run (it pools them)
    spec = FigureSpec("pooled", lambda runs, out: given.append(runs) or [])
    dirs = [tmp_path / "r1", tmp_path / "r2", tmp_path / "r3"]
    written = all_figures([fourd[0], other, fourd[1]], tmp_path, [spec], None, dirs)
    assert given == [dirs]
    assert sorted({str(p.parent.relative_to(tmp_path)) for p in written}) == [
        "figures-1-4dbench-qa",
        "figures-2-mmworld",
    ]
    names = sorted(p.name for p in (tmp_path / "figures-1-4dbench-qa").iterdir())
    assert names == ["bars-1.png", "bars-1.svg", "overall-vs-views.png", "overall-vs-views.svg"]
    bars = (tmp_path / "figures-1-4dbench-qa" / "bars-1.svg").read_text()
    assert "<!-- cost $_$ [" in bars  # the SVG keeps the label's text
    assert "Qwen2-VL-72B-Instruct-AWQ-openai-compat" not in bars  # wrapped onto lines
    assert (
        "m (incomplete: 4 of 10 not scored)"
        in (tmp_path / "figures-2-mmworld" / "bars-1.svg").read_text()
    )
    # a column without a number (no sample; NaN) is "n/a", not a bar of height 0; a run with
    # no bar at all is still in the legend
    empty = _result("empty", [0]).model_copy(
        update={"columns": {"Action": None, "Overall": math.nan}}
    )
    bars = bar_figures([fourd[0], empty], tmp_path / "empty")[1].read_text()
    assert bars.count("<!-- n/a -->") == 2 and "<!-- empty -->" in bars
    sweep = [fourd[0], fourd[1].model_copy(update={"model": "cost $_$", "errors": 1})]
    curve = curve_figure(sweep, tmp_path / "c", None)
    assert "incomplete at views 3: hollow" in curve[1].read_text()
