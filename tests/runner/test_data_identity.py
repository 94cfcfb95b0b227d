"""A results folder is never replaced by a run over other data, for built-in and declared
benchmarks: a rerun whose rows differ from the stored run's, or that loads no row (a typo in
--data), stops before writing (exit 2) naming both data folders; --fresh starts over; rows added
to the same data (a bad row fixed) run on. "Run the same command again" is said only where a
retry can help."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_support import ROWS, make_bench, results, vidbench
from vidbench.testing import ChatServer, FaultPlan


def snapshot(out: Path) -> dict[str, bytes]:
    """The folder's files (SQLite's -wal/-shm companions, which a reader may add, aside)."""
    return {
        p.name: p.read_bytes()
        for p in sorted(out.iterdir())
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def said(capsys: pytest.CaptureFixture) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_a_typo_in_data_leaves_a_declared_benchmarks_results_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """It replaced a good results.json with an empty one (n = 1) and said "run the same command
    again to retry"."""
    bench = make_bench(tmp_path / "bench")
    out = tmp_path / "run"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", out) == 0
    before = snapshot(out)
    capsys.readouterr()
    typo = tmp_path / "bnech"
    assert (
        vidbench("run", f"custom:{bench}", "--data", typo, "--model", "random", "--out", out) == 2
    )
    assert snapshot(out) == before and results(out)["n"] == 6
    message = said(capsys)
    assert f"no row loads from {typo} (1 problem(s))" in message
    assert f"nothing was written to {out} (it keeps its run over {bench})" in message
    assert "run the same command again" not in message
    # with --fresh too: it deleted every stored answer first, then stopped for want of rows
    fresh = ("run", f"custom:{bench}", "--data", typo, "--model", "random", "--out", out)
    assert vidbench(*fresh, "--fresh") == 2
    assert snapshot(out) == before
    assert f"nothing was written to {out} (it keeps its run over {bench})" in said(capsys)


def test_a_first_run_over_a_typo_leaves_no_folder_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A first run that stops before writing anything (no row loads) leaves no empty results
    folder holding only its lock file; a folder that was there before stays."""
    bench = make_bench(tmp_path / "bench")
    typo, out = tmp_path / "bnech", tmp_path / "run"
    argv = ("run", f"custom:{bench}", "--data", typo, "--model", "random", "--out", out)
    assert vidbench(*argv) == 2
    assert not out.exists()
    out.mkdir()
    assert vidbench(*argv) == 2
    assert out.is_dir() and list(out.iterdir()) == []


def test_a_built_in_benchmark_over_other_data_is_refused(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    args = ["--model", "random", "--out", out]
    assert vidbench("run", "4dbench-qa", "--data", qa_release, *args) == 0
    before = snapshot(out)
    other = shutil.copytree(qa_release, tmp_path / "other")
    qa = other / "4D_Object_Question_Answering" / "data" / "4d_qa.json"
    records = json.loads(qa.read_text())
    for record in records.values():
        record["Question"] = "Something else entirely?"
    qa.write_text(json.dumps(records))
    capsys.readouterr()
    assert vidbench("run", "4dbench-qa", "--data", other, *args) == 2
    assert snapshot(out) == before
    message = said(capsys)
    assert f"{out} holds a run over other data: {qa_release} (20 rows); this run reads {other}" in (
        message
    )
    assert "20 of the 20 rows they share differ" in message and "--fresh" in message

    assert vidbench("run", "4dbench-qa", "--data", other, *args, "--fresh") == 0
    assert results(out)["data"] == str(other)
    assert "infer: 20 answered, 0 reused from the store" in capsys.readouterr().err


def test_rows_added_to_the_same_data_run_on(tmp_path: Path) -> None:
    """A bad row fixed (or --limit raised) is the same data with a row more."""
    rows = [*ROWS, {**ROWS[0], "video_id": "gone"}]
    bench = make_bench(tmp_path / "bench", rows=rows)
    out = tmp_path / "run"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", out) == 3
    make_bench(bench, rows=[*ROWS, {**ROWS[0], "video_id": "clip1"}])
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", out) == 0
    assert results(out)["n"] == 7 and results(out)["errors"] == 0
    # a subset of the same data (--limit) runs on too
    assert (
        vidbench("run", f"custom:{bench}", "--model", "random", "--out", out, "--limit", "3") == 0
    )


def test_the_same_data_elsewhere_is_the_same_data(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench")
    out = tmp_path / "run"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", out) == 0
    moved = shutil.copytree(bench, tmp_path / "copy")
    assert (
        vidbench("run", f"custom:{bench}", "--data", moved, "--model", "random", "--out", out) == 0
    )


def test_retry_is_suggested_only_when_it_can_help(
    tmp_path: Path, fake: Callable[..., ChatServer], capsys: pytest.CaptureFixture
) -> None:
    bench = make_bench(tmp_path / "bench", rows=[*ROWS, {**ROWS[0], "video_id": "gone"}])
    out = tmp_path / "bad-row"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", out) == 3
    message = said(capsys)
    assert "error_details in results.json names each sample left out" in message
    assert "run the same command again" not in message

    server = fake(faults=FaultPlan(rate=1.0, kinds=("500",)))
    model = ["--model", f"openai-compat:{server.base_url}#m", "--model-opt", "max_retries=0"]
    out = tmp_path / "server-errors"
    assert vidbench("run", f"custom:{make_bench(tmp_path / 'ok')}", *model, "--out", out) == 3
    assert "run the same command again to retry 6 failed calls" in said(capsys)


def test_scoring_a_stopped_run_says_to_ask_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # a run stopped before the end: the store holds some answers; the score and report stages
    # alone cannot ask the rest, and "the same command again does not change them" misled
    import sqlite3
    from contextlib import closing

    out = tmp_path / "run"
    assert vidbench("run", f"custom:{make_bench(tmp_path / 'bench')}", "--model", "random",
                    "--out", out) == 0  # fmt: skip
    with closing(sqlite3.connect(out / "store.sqlite")) as db, db:
        db.execute("delete from responses where sample_id in (select sample_id from responses "
                    "order by sample_id limit 2)")  # fmt: skip
    capsys.readouterr()
    for stage in ("score", "report"):
        assert vidbench("run", "--out", out, "--stage", stage) == 3
        message = said(capsys)
        assert "some samples were never asked (the run stopped before the end)" in message
        assert "does not change them" not in message
