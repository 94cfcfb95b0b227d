"""The directory given is the run: a moved or copied results directory is read and written
where it is (never where its run.json says it was made), and `vidbench run` exits non-zero
whenever its results are incomplete."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from custom_support import ISSUE_TOML, make_bench
from vidbench.cli import main
from vidbench.core.errors import EXIT_CONFIG, EXIT_INCOMPLETE, EXIT_OK
from vidbench.runner.lock import results_lock


def _run(*argv: str) -> int:
    return main(["--no-progress", *argv])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_moved_or_copied_run_is_rescored_where_it_is(
    qa_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # run.json keeps the relative `--out` the user typed
    data = str(qa_release)
    assert _run("run", "4dbench-qa", "--data", data, "--model", "random", "--out", "y1") == 0
    os.rename("y1", "y2")
    assert _run("run", "--out", "y2", "--stage", "score") == EXIT_OK
    assert not Path("y1").exists()  # before: y1/ came back with an empty store, all "missing"
    assert _run("run", "--out", "y2", "--stage", "report") == EXIT_OK
    assert '"n_scored": 20' in Path("y2/results.json").read_text()

    shutil.copytree("y2", "y3")
    before = _files(Path("y2"))
    assert _run("run", "--out", "y3", "--stage", "score") == EXIT_OK
    assert _run("run", "--out", "y3", "--stage", "report") == EXIT_OK
    assert _files(Path("y2")) == before  # the original is untouched by its copy's stages
    assert '"n_scored": 20' in Path("y3/results.json").read_text()


def test_incomplete_results_exit_with_their_own_code(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    shutil.copytree(qa_release, data)
    # one object's views unreadable: its five questions cannot be answered
    uid_dir = next(
        (data / "4D_Object_Question_Answering/data/4d_object_multi_view_videos").iterdir()
    )
    for video in uid_dir.iterdir():
        video.write_bytes(b"not a video")
    out = tmp_path / "r"
    code = _run("run", "4dbench-qa", "--data", str(data), "--model", "random", "--out", str(out))
    assert code == EXIT_INCOMPLETE == 3
    assert "incomplete" in capsys.readouterr().err
    assert (out / "results.json").is_file()  # written, but not complete
    # the report stage alone says the same of the stored run
    assert _run("run", "--out", str(out), "--stage", "report") == EXIT_INCOMPLETE


def test_out_is_never_the_data_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A declared benchmark whose rows file is samples.jsonl: results written into its folder
    replaced the rows with the scored records (and --fresh deleted them)."""
    toml = ISSUE_TOML.replace('rows = "questions.jsonl"', 'rows = "samples.jsonl"')
    bench = make_bench(tmp_path / "bench", toml, rows_file="samples.jsonl")
    before = _files(bench)
    argv = ("run", f"custom:{bench}", "--model", "constant:A", "--out", str(bench))
    assert _run(*argv) == EXIT_CONFIG
    assert f"is the data folder {bench}" in " ".join(capsys.readouterr().err.split())
    assert _run(*argv, "--fresh") == EXIT_CONFIG
    assert _files(bench) == before
    assert _run(*argv[:-1], str(bench / "results")) == EXIT_OK  # a folder inside it is fine


def test_a_single_run_and_a_runs_folder_never_share_an_out(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--runs 2` into a single run's folder replaced its results.json with the runs' mean
    beside its samples.jsonl (what `vidbench view` then showed); a single run into a `--runs`
    folder alike; and a single run beside a `--runs` command in progress wrote there at once."""
    task = ("run", "4dbench-qa", "--data", str(qa_release), "--model", "random-choice")
    single, runs = tmp_path / "single", tmp_path / "runs"
    assert _run(*task, "--out", str(single)) == EXIT_OK
    assert _run(*task, "--out", str(single), "--runs", "2") == EXIT_CONFIG
    assert "holds a single run" in capsys.readouterr().err
    assert not (single / "run-1").exists()
    assert _run(*task, "--out", str(runs), "--runs", "2") == EXIT_OK
    assert _run(*task, "--out", str(runs)) == EXIT_CONFIG
    assert "holds the runs of a --runs N command" in " ".join(capsys.readouterr().err.split())
    assert not (runs / "store.sqlite").exists()
    with results_lock(runs, "a --runs command in progress"):  # OUT is held, not only run-i
        assert _run(*task, "--out", str(runs), "--runs", "2") == EXIT_CONFIG
    assert "a --runs command in progress)" in " ".join(capsys.readouterr().err.split())


KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from vidbench.core.files import write_atomic

def chunks():
    yield b'{"id": "half a line'
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 half-way through the write

write_atomic(Path(sys.argv[1]), chunks())
"""


def test_a_write_killed_half_way_leaves_no_temporary_file_beside_the_results(
    tmp_path: Path,
) -> None:
    """kill -9 during an atomic write left its `.tmp-*` file in the results folder for good;
    the next command there clears it (only ours, by name, and only while it holds the folder)."""
    import subprocess
    import sys

    bench, out = make_bench(tmp_path / "bench"), tmp_path / "r"
    assert _run("run", f"custom:{bench}", "--model", "constant:A", "--out", str(out)) == EXIT_OK
    samples = (out / "samples.jsonl").read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    (out / ".tmp-notes.txt").write_text("a user's file, not one of ours")
    with results_lock(out, "a command in progress"):  # held: its writes' files stay
        argv = [sys.executable, "-c", KILLED_MID_WRITE, str(out / "samples.jsonl")]
        assert subprocess.run(argv, env=env).returncode == -9
        (left,) = (p for p in out.iterdir() if p.name.startswith(".tmp-") and p.suffix == "")
        assert _run("run", "--out", str(out), "--stage", "report") == EXIT_CONFIG
        assert left.exists()
    assert _run("run", "--out", str(out), "--stage", "report") == EXIT_OK
    assert not left.exists() and (out / ".tmp-notes.txt").exists()
    assert (out / "samples.jsonl").read_bytes() == samples  # the results as they were
