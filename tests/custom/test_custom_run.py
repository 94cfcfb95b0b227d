"""A declared benchmark through every framework command, unchanged: run (no --data), the store
and resume, moves of the results folder and of the benchmark, report, view, compare, figures,
sweep, analyze errors, and bad rows reported as named problems."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_support import ROWS, make_bench, predictions, results, samples, vidbench
from vidbench.testing import ChatServer

# gold A, B, C, D, A, B: this model is right on questions-1, -3, -5 and -6 (the last two garden)
REPLIES = {f"questions-{n}": reply for n, reply in enumerate(["(A)", "C", "C", "(B)", "A", "B"], 1)}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bench(tmp_path_factory.mktemp("bench") / "my-bench")


def test_run_without_data_resume_and_report(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(bench.parent)
    out = tmp_path / "run"
    assert vidbench("run", "custom:my-bench", "--model", "random", "--out", out) == 0
    stored = json.loads((out / "run.json").read_text())
    assert stored["task"] == f"custom:{bench}" and stored["data"] == ""  # the folder's own rows
    found = results(out)
    assert found["n"] == 6 and found["errors"] == 0
    assert list(found["columns"]) == ["Overall", "garden", "kitchen"]
    assert found["column_n"] == {"Overall": 6, "garden": 2, "kitchen": 4}
    assert found["chance"]["Overall"] == 25.0

    capsys.readouterr()
    assert vidbench("run", "custom:my-bench", "--model", "random", "--out", out) == 0
    assert "infer: 0 answered, 6 reused from the store, 0 failed" in capsys.readouterr().err

    table = tmp_path / "table"
    assert vidbench("report", out, "--out", table) == 0
    header = (table / "table.md").read_text().splitlines()[0]
    assert "Overall" in header and "garden" in header and "kitchen" in header


def test_scores_per_group_value(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{bench}", "--model", model, "--out", out) == 0
    found = results(out)
    assert found["columns"] == {"Overall": pytest.approx(200 / 3), "garden": 100.0, "kitchen": 50.0}
    rows = samples(out)
    assert rows["questions-2"] | {"raw_output": None} == rows["questions-2"] | {
        "raw_output": None,
        "gold": "B",
        "parsed": "C",
        "outcome": {"kind": "wrong", "reason": None},
        "groups": {"domain": "kitchen"},
    }


def test_a_stored_run_survives_moves(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    folder = shutil.copytree(bench, tmp_path / "bench")
    first = tmp_path / "first"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", first) == 0
    want = results(first)["columns"]

    moved = shutil.move(first, tmp_path / "elsewhere" / "moved")  # the results folder moves
    monkeypatch.chdir(tmp_path / "elsewhere")
    (Path(moved) / "results.json").unlink()
    assert vidbench("run", "--out", "moved", "--stage", "score") == 0
    assert vidbench("run", "--out", "moved", "--stage", "report") == 0
    assert results(Path(moved))["columns"] == want

    shutil.move(folder, tmp_path / "renamed")  # the benchmark moves: named, and found again
    capsys.readouterr()
    assert vidbench("run", "--out", "moved", "--stage", "score") == 2
    said = capsys.readouterr().err.replace("\n", "")
    assert f"custom:{folder}: no such folder (moved? a stored run re-opens it from" in said
    renamed = f"custom:{tmp_path / 'renamed'}"
    assert vidbench("run", renamed, "--out", "moved", "--stage", "score") == 0
    assert vidbench("run", renamed, "--out", "moved", "--stage", "report") == 0
    assert results(Path(moved))["columns"] == want
    assert json.loads((Path(moved) / "run.json").read_text())["task"] == renamed  # its new place


@pytest.mark.slow
def test_view_compare_and_figures(bench: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert vidbench("run", f"custom:{bench}", "--model", "constant:A", "--out", a) == 0
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{bench}", "--model", model, "--out", b) == 0

    page = tmp_path / "page"
    assert vidbench("view", a, b, "--out", page, "--videos", "none") == 0
    meta = (page / "data" / "meta.js").read_text()
    assert '"garden"' in meta and '"kitchen"' in meta  # samples grouped by the group values

    compared = tmp_path / "compare"
    assert vidbench("compare", a, b, "--out", compared) == 0
    columns = json.loads((compared / "compare.json").read_text())["columns"]
    assert set(columns) == {"Overall", "garden", "kitchen"}
    assert (columns["garden"]["mean_a"], columns["garden"]["mean_b"]) == (50.0, 100.0)

    figures = tmp_path / "figures"
    assert vidbench("figures", a, b, "--out", figures) == 0
    assert list(figures.glob("*.png")) and list(figures.glob("*.svg"))


def test_sweep_with_a_frames_variant(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ["sweep", "--tasks", f"custom:{bench}", "--models", "random,constant:B"]
    args += ["--variants", "frames-2,frames-4", "--data", bench, "--out", out, "--no-report"]
    assert vidbench(*args) == 0
    runs = sorted(p.parent for p in out.rglob("results.json"))
    assert len(runs) == 4
    frames = {
        results(r)["task"].rsplit(":", 1)[1]: results(r)["frame_spec"]["frames"] for r in runs
    }
    assert frames == {"frames-2": 2, "frames-4": 4}
    assert "Overall" in (out / "table.md").read_text()


@pytest.mark.slow
def test_analyze_errors(bench: Path, tmp_path: Path, fake: Callable[..., ChatServer]) -> None:
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{bench}", "--model", model, "--out", out) == 0
    server: ChatServer = fake(reply=lambda body: '{"error_type": "VPE", "reason": "misread."}')
    spec = f"openai-compat:{server.base_url}#judge"
    assert vidbench("analyze", "errors", out, "--judge", spec, "--out", tmp_path / "errors") == 0
    assert len(server.requests) == 2  # the two wrong answers
    table = (tmp_path / "errors" / "error_types.md").read_text()
    assert "| 0 (0%) | 0 (0%) | 2 (100%) |" in table


def test_bad_rows_are_named_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = [*ROWS, {**ROWS[0], "video_id": "gone"}, {**ROWS[1], "answer": "Z"}]
    folder = make_bench(tmp_path / "bench", rows=rows)
    assert vidbench("validate", "custom", folder) == 1
    said = capsys.readouterr().out
    assert f"questions-7: line 7: missing video {folder / 'videos' / 'gone.mp4'}" in said
    assert "questions-8: line 8: answer 'Z' is not a letter A-D" in said

    out = tmp_path / "run"
    assert vidbench("run", f"custom:{folder}", "--model", "random", "--out", out) == 3
    found = results(out)
    assert found["n"] == 8 and found["n_scored"] == 6 and found["errors_by_status"] == {"data": 2}


def test_two_declared_benchmarks_get_a_table_each(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    other = make_bench(tmp_path / "other", rows=ROWS[:4])
    a, b = tmp_path / "a", tmp_path / "b"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", a) == 0
    assert vidbench("run", f"custom:{other}", "--model", "random", "--out", b) == 0
    assert results(a)["data"] == str(bench) and results(b)["data"] == str(other)
    assert vidbench("report", a, b, "--out", tmp_path / "table") == 0
    assert sorted(p.name for p in (tmp_path / "table").iterdir()) == [
        "table-1-custom",
        "table-2-custom",
    ]
    capsys.readouterr()
    assert vidbench("compare", a, b) == 2  # other samples: no pairing
    assert "the same samples are needed" in capsys.readouterr().err.replace("\n", "")


def test_one_file_over_another_data_folder(bench: Path, tmp_path: Path) -> None:
    """The file's paths are relative to the data folder: a benchmark.toml kept apart from the
    data reads the folder --data names."""
    spec_only = tmp_path / "spec"
    spec_only.mkdir()
    shutil.copy(bench / "benchmark.toml", spec_only)
    out = tmp_path / "run"
    assert (
        vidbench("run", f"custom:{spec_only}", "--data", bench, "--model", "random", "--out", out)
        == 0
    )
    assert results(out)["n"] == 6 and results(out)["data"] == str(bench)
    assert vidbench("validate", "custom", spec_only) == 1  # its own folder has no rows
