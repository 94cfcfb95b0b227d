"""`vidbench figures`: bar figures per part of the table, and curves for views/frames sweeps."""

from __future__ import annotations

from pathlib import Path

from vidbench.cli import main
from vidbench.report.figures import bar_figures, curve_figure, sweep_axis
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
