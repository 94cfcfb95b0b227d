"""Every option is checked at parse time, a key is never echoed, a results directory has one
writer, and the stages of a stored run need only --out."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mmworld_support import make_mmworld
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.runner.lock import results_lock
from vidbench.testing import ChatServer

KEY = "sk-pasted-by-mistake-0123456789"


def parse_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line argparse prints for a bad value (exit 2, no traceback)."""
    with pytest.raises(SystemExit) as stop:
        main(["--no-progress", *argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--limit", "0", "argument --limit: must be a whole number >= 1, got '0'"),
        ("--limit", "-3", "argument --limit: must be a whole number >= 1, got '-3'"),
        ("--concurrency", "0", "argument --concurrency: must be a whole number >= 1"),
        ("--views", "1,8,25", "argument --views: view ids are 0..23 (24 views per object)"),
        ("--views", "30", "argument --views: a view count is 1..24, got 30"),
        ("--max-side", "4", "argument --max-side: must be 0 (the video's own size) or >= 8"),
        ("--temperature", "-1", "argument --temperature: must be a number >= 0"),
        ("--top-p", "0", "argument --top-p: must be a number > 0 and <= 1"),
        ("--runs", "0", "argument --runs: must be a whole number >= 1"),
        ("--frames", "x", "argument --frames: must be a whole number >= 1, got 'x'"),
    ],
)
def test_run_options_are_checked_at_parse_time(
    flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = parse_error(capsys, "run", "4dbench-qa", "--out", "o", flag, value)
    assert message in line


def test_other_commands_check_their_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--port: must be a whole number in 1..65535" in parse_error(
        capsys, "serve-local-llm", "--port", "70000"
    )
    assert "--judge-attempts: must be a whole number >= 1" in parse_error(
        capsys, "score-captions", "--refs", "r.csv", "--out", "s.json", "--judge-attempts", "0"
    )
    assert "--concurrency: must be a whole number >= 1" in parse_error(
        capsys, "judge", "autoeval-video", "--rules", "r", "--predictions", "p", "--out", "o",
        "--judge", "j", "--concurrency", "0",
    )  # fmt: skip
    assert "--size: must be a whole number >= 8" in parse_error(
        capsys, "synth", "4d", "--out", "o", "--size", "4"
    )


def test_a_key_given_for_its_variable_name_is_never_echoed(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = parse_error(capsys, "run", "4dbench-qa", "--out", "o", "--api-key-env", KEY)
    assert "not the key itself" in line and KEY not in line
    with ChatServer() as server:
        code = main(
            ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release), "--out",
             str(tmp_path / "r"), "--model", f"openai-compat:{server.base_url}#m",
             "--model-opt", f"api_key_env={KEY}"]
        )  # fmt: skip
    assert code == 2
    printed = " ".join("".join(capsys.readouterr()).split())
    assert "not the key itself" in printed and KEY not in printed


def test_a_judge_where_none_is_used_and_a_judge_option_typo(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release), "--model", "random"]
    argv += ["--out", str(tmp_path / "r")]
    assert main([*argv, "--judge", "random"]) == 2
    assert "4dbench-qa is not scored by an LLM judge" in capsys.readouterr().err
    assert not (tmp_path / "r" / "store.sqlite").exists()  # stopped before any work
    caption = ["--no-progress", "run", "4dbench-caption", *argv[3:]]
    with ChatServer() as server:
        bad = ["--judge", f"openai-compat:{server.base_url}#j", "--judge-opt", "temprature=0"]
        assert main([*caption, *bad]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "does not take --judge-opt temprature" in err and "--model-opt" not in err


# ------------------------------------------------------------------------------- the lock
HOLD = """
import sys, time
from pathlib import Path
from vidbench.runner.lock import results_lock
with results_lock(Path(sys.argv[1]), "a long run"):
    print("holding", flush=True)
    time.sleep(60)
"""


def _holder(directory: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "holding"
    return process


def test_a_second_run_on_the_same_results_stops_and_sends_nothing(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    holder = _holder(out)
    try:
        with ChatServer() as server:
            code = main(
                ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release), "--out",
                 str(out), "--model", f"openai-compat:{server.base_url}#m"]
            )  # fmt: skip
            assert code == 2 and server.requests == []
        err = " ".join(capsys.readouterr().err.split())
        assert f"is in use by another vidbench command (pid {holder.pid}" in err
        assert "a long run" in err
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_left_by_a_killed_run_does_not_block(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    with pytest.raises(ConfigError, match="in use"), results_lock(tmp_path):
        pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with results_lock(tmp_path, "the next run"):  # the kernel released the dead run's lock
        assert "the next run" in (tmp_path / ".lock").read_text()


# ------------------------------------------------------------------- stored runs, --out only
def test_score_and_report_need_only_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = make_mmworld(tmp_path / "mmworld")
    out = tmp_path / "r"
    with ChatServer(reply="(b)", api_key=KEY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        argv = ["--no-progress", "run", "mmworld:rule", "--data", str(data), "--out", str(out)]
        assert main([*argv, "--model", "openai:gpt-test", "--cache-dir", str(tmp_path / "c")]) == 0
        sent = len(server.requests)
    monkeypatch.delenv("OPENAI_API_KEY")  # no key, no SDK call: stored answers only
    first = json.loads((out / "results.json").read_text())
    assert main(["--no-progress", "run", "mmworld:rule+official", "--out", str(out),
                 "--stage", "score"]) == 0  # fmt: skip
    assert main(["--no-progress", "run", "--out", str(out), "--stage", "report"]) == 0
    official = json.loads((out / "results.json").read_text())
    assert official["task"] == "mmworld:rule+official" and official["n"] == first["n"]
    shutil.move(data, tmp_path / "moved")  # the report stage reads stored files alone
    assert main(["--no-progress", "run", "--out", str(out), "--stage", "report"]) == 0
    assert json.loads((out / "results.json").read_text())["columns"] == official["columns"]
    assert main(["--no-progress", "run", "mmworld:api-prompt", "--out", str(out),
                 "--stage", "report"]) == 2  # fmt: skip
    assert "asks the model other questions" in " ".join(capsys.readouterr().err.split())
    assert sent == 14


def test_frame_names_and_task_listing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from vidbench.media.encode import write_mp4

    clip = tmp_path / "clip.mp4"
    write_mp4(clip, [np.full((16, 16, 3), i, np.uint8) for i in range(48)], fps=24)
    assert main(["frames", str(clip), "--frames", "2", "--start", "1", "--end", "2",
                 "--sampler", "linspace", "--out", str(tmp_path / "f")]) == 0  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "f").iterdir())
    assert names == ["00_frame000024_1.00s.jpg", "01_frame000047_1.96s.jpg"]  # both absolute
    assert "0.96 s into the window" in capsys.readouterr().out
    assert main(["tasks"]) == 0
    listing = capsys.readouterr().out
    # a table: a row per task with its official input and its variants, then the placeholders
    row = next(line for line in listing.splitlines() if line.startswith("│ 4dbench-qa "))
    assert "views 1, 8, 16 × 6 frames (interval)" in row and "views-K, frames-N" in row
    assert "{'views'" not in listing and "K = 1..24 views" in listing
