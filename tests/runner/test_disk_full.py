"""A full disk stops a run with a message that names the folder and its free space, keeps every
stored answer, and the same command on a larger disk continues where it stopped. The disk is a
real one: a small tmpfs mounted in a mount namespace of the test's own (unshare)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from vidbench.cli import main

# $1: size in KiB, $2: the mount point; then the command. SMALL/run is copied to BIG/run after
# the command (the tmpfs ends with the namespace); COPY_IN, when set, is copied to SMALL/run
# before it; FILL, when set, fills the disk to its last byte before it.
SCRIPT = r"""
set -u
mount -t tmpfs -o size="$1"k tmpfs "$2" || exit 99
shift 2
if [ -n "${COPY_IN:-}" ]; then cp -a "$COPY_IN" "$SMALL/run" || exit 98; fi
if [ -n "${FILL:-}" ]; then dd if=/dev/zero of="$SMALL/filler" bs=4k 2> /dev/null; fi
"$@" 2> "$LOG"
echo $? > "$CODE"
if [ -e "$SMALL/run" ]; then cp -a "$SMALL/run" "$BIG/run"; fi
"""


def _namespace() -> list[str]:
    """A launcher whose command may mount a tmpfs of its own (unprivileged first)."""
    for launcher in (["unshare", "-rm"], ["unshare", "-m"]):
        probe = [*launcher, "sh", "-c", "mount -t tmpfs -o size=8k tmpfs /mnt"]
        if shutil.which("unshare") and subprocess.run(probe, capture_output=True).returncode == 0:
            return launcher
    pytest.skip("no mount namespace here (unshare -rm and -m refused): no small disk to fill")


def on_small_disk(
    tmp_path: Path, size_kb: int, argv: list[str], copy_in: Path | None = None, full: bool = False
) -> tuple[int, str, Path]:
    """`vidbench ARGV` with tmp_path/small a `size_kb` tmpfs (holding a copy of `copy_in` as
    small/run when given; with not a byte free when `full`); small/run is copied to big/run
    afterwards. Exit code, stderr, big/run."""
    small, big = tmp_path / "small", tmp_path / "big"
    small.mkdir()
    big.mkdir()
    log, code = tmp_path / "stderr.txt", tmp_path / "code.txt"
    env = {**os.environ, "LOG": str(log), "CODE": str(code), "SMALL": str(small), "BIG": str(big)}
    if copy_in is not None:
        env["COPY_IN"] = str(copy_in)
    if full:
        env["FILL"] = "1"
    command = [sys.executable, "-m", "vidbench.cli", "--no-progress", *argv]
    done = subprocess.run(
        [*_namespace(), "bash", "-c", SCRIPT, "bash", str(size_kb), str(small), *command],
        env=env,
        timeout=300,
    )
    assert done.returncode not in (98, 99), "the tmpfs was not mounted, or the copy did not fit"
    return int(code.read_text()), log.read_text(), big / "run"


def _answers(run: Path) -> int:
    with sqlite3.connect(run / "store.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def _message(stderr: str) -> str:
    assert "Traceback" not in stderr
    return " ".join(stderr.split())  # the console wraps long lines


@pytest.mark.slow
def test_the_infer_stage_on_a_full_disk_keeps_its_answers_and_resumes(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_run = str(tmp_path / "small" / "run")
    task = ["4dbench-qa", "--data", str(qa_release), "--model", "random"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code, stderr, run = on_small_disk(tmp_path, 240, ["run", *task, "--out", small_run, *cache])
    assert code == 1
    message = _message(stderr)
    assert f"the disk holding {small_run} is full" in message and "MiB free" in message
    assert "run the same command again" in message
    stored = _answers(run)
    assert 0 < stored < 20  # answers stored before the disk filled up are all there

    # the same command on a larger disk asks only what is not stored
    assert main(["--no-progress", "run", *task, "--out", str(run), *cache]) == 0
    assert f"infer: {20 - stored} answered, {stored} reused" in capsys.readouterr().err
    assert _answers(run) == 20


@pytest.mark.slow
def test_the_score_stage_on_a_full_disk_says_so_and_loses_nothing(
    qa_release: Path, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    task = ["4dbench-qa", "--data", str(qa_release), "--model", "random"]
    assert main(["--no-progress", "run", *task, "--out", str(done), "--stage", "infer"]) == 0
    size_kb = sum(p.stat().st_size for p in done.iterdir()) // 1024 + 12  # the store fits
    argv = ["run", "--out", str(tmp_path / "small" / "run"), "--stage", "score"]
    code, stderr, run = on_small_disk(tmp_path, size_kb, argv, copy_in=done)
    assert code == 1
    assert "is full" in _message(stderr)
    assert _answers(run) == 20  # every stored answer is intact
    assert not (run / "samples.jsonl").exists()  # and no half-written file
    assert main(["--no-progress", "run", "--out", str(run), "--stage", "score"]) == 0
    assert len((run / "samples.jsonl").read_text().splitlines()) == 20


@pytest.mark.slow
def test_a_run_on_a_disk_that_is_already_full_says_so(qa_release: Path, tmp_path: Path) -> None:
    """The results lock is the first file a run writes: on a full disk it fails with the same
    message as a write mid-run, not a traceback from runner/lock.py."""
    small_run = str(tmp_path / "small" / "run")
    argv = ["run", "4dbench-qa", "--data", str(qa_release), "--model", "random"]
    code, stderr, _ = on_small_disk(tmp_path, 64, [*argv, "--out", small_run], full=True)
    message = _message(stderr)
    assert code == 1, message
    assert f"the disk holding {small_run} is full (0.0 MiB free)" in message
    assert "run the same command again" in message


@pytest.mark.slow
def test_a_results_folder_on_a_read_only_disk_is_named_not_a_traceback(
    qa_release: Path, tmp_path: Path
) -> None:
    """A run, and its report stage alone, on a folder mounted read-only (a results folder on a
    read-only share): the lock file cannot be made, which was a traceback from runner/lock.py."""
    run = tmp_path / "run"
    argv = ["run", "4dbench-qa", "--data", str(qa_release), "--model", "random"]
    assert main(["--no-progress", *argv, "--out", str(run)]) == 0
    (run / ".lock").unlink()
    mount = f'mount --bind "{run}" "{run}" && mount -o remount,ro,bind "{run}" && '
    for command in ([*argv, "--out", str(run)], ["run", "--out", str(run), "--stage", "report"]):
        vidbench = " ".join([sys.executable, "-m", "vidbench.cli", "--no-progress", *command])
        done = subprocess.run(
            [*_namespace(), "sh", "-c", mount + vidbench], capture_output=True, text=True
        )
        assert done.returncode == 2, done.stderr
        assert f"{run}: cannot write there (Read-only file system)" in _message(done.stderr)
