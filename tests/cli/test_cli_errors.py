"""No command ends in a traceback on bad input: every README command, run with its input
missing, empty, not what it should be (bytes that are neither UTF-8 nor JSON), a file where a
folder belongs (or a folder where a file does), and offline (HF_HUB_OFFLINE=1), returns an exit
status with a message; a library's exception never reaches the user raw."""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from vidbench.cli import main
from vidbench.media.encode import write_mp4

KINDS = ("missing", "empty", "garbage", "swapped")
GARBAGE = b"\x00\xff not text {\n"
RUN_FILES = ("results.json", "samples.jsonl", "run.json", "store.sqlite", "4d_qa.json")
CURATE_FILES = ("funnel.json", "manifest.jsonl", "quality.jsonl", "render.json")


def make(kind: str, path: Path, folder: bool) -> Path:
    """`path` in the state `kind` says: missing, empty, garbage (a folder: its usual files
    garbled), or swapped (a file where a folder belongs, a folder where a file does)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "empty":
        path.mkdir() if folder else path.write_bytes(b"")
    elif kind == "garbage" and folder:
        path.mkdir()
        for name in (*RUN_FILES, *CURATE_FILES, "project.json", "workspace.json"):
            (path / name).write_bytes(GARBAGE)
    elif kind == "garbage":
        path.write_bytes(GARBAGE)
    elif kind == "swapped":
        path.write_text("a file") if folder else path.mkdir()
    return path


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two rendered objects, their labels, and a tiny CLIP encoder (quality's inputs)."""
    root = tmp_path_factory.mktemp("rendered")
    for i in range(2):
        frame = np.full((32, 32, 3), 60 * i, np.uint8)
        write_mp4(root / "objects" / f"o{i}" / "view_0_rgb_white_bg.mp4", [frame])
    (root / "labels.csv").write_text("uid,label\no0,high quality\no1,textureless\n")
    return root


# each: (name, input is a folder, kinds, argv from (tmp, X)); X is the input made bad
Case = tuple[str, bool, tuple[str, ...], Callable[[Path, Path], list[str]]]
CASES: list[Case] = [
    ("run 4dbench-qa --data", True, KINDS,
     lambda t, x: ["run", "4dbench-qa", "--data", str(x), "--model", "random", "--out", f"{t}/o"]),
    ("run mmworld --data", True, KINDS,
     lambda t, x: ["run", "mmworld:rule", "--data", str(x), "--model", "random-choice",
                   "--out", f"{t}/o"]),
    ("run autoeval-video --data", True, KINDS,
     lambda t, x: ["run", "autoeval-video", "--data", str(x), "--model", "random",
                   "--judge", "constant:yes", "--out", f"{t}/o"]),
    ("run --out a file", True, ("swapped",),
     lambda t, x: ["run", "4dbench-qa", "--data", str(t), "--model", "random", "--out", str(x)]),
    ("run --stage report --out", True, KINDS,
     lambda t, x: ["run", "--out", str(x), "--stage", "report"]),
    ("run --stage score --out", True, KINDS,
     lambda t, x: ["run", "--out", str(x), "--stage", "score"]),
    ("validate 4dbench", True, KINDS, lambda t, x: ["validate", "4dbench", str(x)]),
    ("validate mmworld", True, KINDS, lambda t, x: ["validate", "mmworld", str(x)]),
    ("validate autoeval-video", True, KINDS, lambda t, x: ["validate", "autoeval-video", str(x)]),
    ("frames", False, KINDS, lambda t, x: ["frames", str(x), "--frames", "4", "--out", f"{t}/o"]),
    ("report", True, KINDS, lambda t, x: ["report", str(x), "--out", f"{t}/o"]),
    ("figures", True, KINDS, lambda t, x: ["figures", str(x), "--out", f"{t}/o"]),
    ("view", True, KINDS, lambda t, x: ["view", str(x), "--out", f"{t}/o"]),
    ("view --out", True, ("garbage", "swapped"), lambda t, x: ["view", str(t), "--out", str(x)]),
    ("compare", True, KINDS, lambda t, x: ["compare", str(x), str(x), "--out", f"{t}/o"]),
    ("synth 4d --out a file", True, ("swapped",),
     lambda t, x: ["synth", "4d", "--out", str(x), "--objects", "1", "--frames", "12"]),
    ("synth 4d --assets a file", True, ("swapped",),
     lambda t, x: ["synth", "4d", "--assets", str(x), "--objects", "1", "--frames", "12"]),
    ("demo --out a file", True, ("swapped",), lambda t, x: ["demo", "--out", str(x)]),
    ("score-captions --pred", False, KINDS,
     lambda t, x: ["score-captions", "--pred", str(x), "--refs", f"{t}/refs.csv",
                   "--out", f"{t}/s.json", "--metrics", "bleu"]),
    ("score-captions --refs", False, KINDS,
     lambda t, x: ["score-captions", "--pred", f"{t}/pred.jsonl", "--refs", str(x),
                   "--out", f"{t}/s.json", "--metrics", "bleu"]),
    ("score-captions bertscore, offline", False, ("missing",),
     lambda t, x: ["score-captions", "--pred", f"{t}/pred.jsonl", "--refs", f"{t}/refs.csv",
                   "--out", f"{t}/s.json", "--metrics", "bertscore"]),
    ("judge autoeval-video --rules", False, KINDS,
     lambda t, x: ["judge", "autoeval-video", "--rules", str(x), "--predictions",
                   f"{t}/pred.jsonl", "--judge", "constant:yes", "--out", f"{t}/o"]),
    ("judge-agreement --labels", False, KINDS,
     lambda t, x: ["judge-agreement", "--rules", f"{t}/rules.json", "--labels", str(x),
                   "--judge", "constant:yes", "--out", f"{t}/o"]),
    ("rules init --rules", False, KINDS,
     lambda t, x: ["rules", "init", f"{t}/ws", "--rules", str(x)]),
    ("rules show", True, KINDS, lambda t, x: ["rules", "show", str(x)]),
    ("rules attack", True, KINDS,
     lambda t, x: ["rules", "attack", str(x), "17", "--answer", "a", "--expect", "0"]),
    ("curate 4d render", False, KINDS,
     lambda t, x: ["curate", "4d", "render", str(x), "--out", f"{t}/o"]),
    ("curate 4d motion", True, KINDS,
     lambda t, x: ["curate", "4d", "motion", str(x), "--out", f"{t}/o"]),
    ("curate 4d funnel", True, KINDS, lambda t, x: ["curate", "4d", "funnel", str(x)]),
    ("curate 4d qa --data", True, KINDS,
     lambda t, x: ["curate", "4d", "qa", "--data", str(x), "--out", f"{t}/o", "--generator",
                   "random", "--validator", "random", "--blind", "random", "--blind", "random"]),
    ("curate 4d captions --data", True, KINDS,
     lambda t, x: ["curate", "4d", "captions", "--data", str(x), "--out", f"{t}/o",
                   "--model", "random"]),
    ("curate mmworld keyframes", True, KINDS,
     lambda t, x: ["curate", "mmworld", "keyframes", str(x), "--out", f"{t}/o"]),
    ("curate mmworld asr list", False, KINDS,
     lambda t, x: ["curate", "mmworld", "asr", str(x), "--out", f"{t}/o"]),
    ("analyze errors", True, KINDS,
     lambda t, x: ["analyze", "errors", str(x), "--judge", "constant:x", "--out", f"{t}/o"]),
    ("sweep --config", False, KINDS,
     lambda t, x: ["sweep", "--config", str(x), "--out", f"{t}/o"]),
    ("annotate init --data", True, KINDS,
     lambda t, x: ["annotate", "init", f"{t}/p", "--data", str(x)]),
    ("annotate export", True, KINDS, lambda t, x: ["annotate", "export", str(x), "captions"]),
]  # fmt: skip
QUALITY: list[Case] = [
    # the README's own command, offline: the weights are named, where they were looked for too
    ("quality train --weights (README)", True, ("missing",),
     lambda t, x: ["curate", "4d", "quality", "train", f"{t}/objects", "--labels",
                   f"{t}/labels.csv", "--weights", "openai/clip-vit-base-patch32", "--out",
                   f"{t}/q"]),
    ("quality train --weights", True, KINDS,
     lambda t, x: ["curate", "4d", "quality", "train", f"{t}/objects", "--labels",
                   f"{t}/labels.csv", "--weights", str(x), "--out", f"{t}/q"]),
    ("quality train --labels", False, KINDS,
     lambda t, x: ["curate", "4d", "quality", "train", f"{t}/objects", "--labels", str(x),
                   "--weights", f"{t}/none", "--out", f"{t}/q"]),
    ("quality train VIDEOS", True, KINDS,
     lambda t, x: ["curate", "4d", "quality", "train", str(x), "--labels", f"{t}/labels.csv",
                   "--weights", f"{t}/none", "--out", f"{t}/q"]),
    ("quality predict --model", True, KINDS,
     lambda t, x: ["curate", "4d", "quality", "predict", f"{t}/objects", "--model", str(x)]),
    ("quality predict VIDEOS", True, KINDS,
     lambda t, x: ["curate", "4d", "quality", "predict", str(x), "--model", f"{t}/none"]),
]  # fmt: skip


def _inputs(t: Path) -> None:
    """The good inputs the cases name beside the bad one."""
    (t / "refs.csv").write_text(
        "folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\na,x,x,x,x,x\n"
    )
    (t / "pred.jsonl").write_text('{"id": "a", "caption": "a ball"}\n')
    (t / "rules.json").write_text("[]")


def _run(argv: list[str]) -> tuple[int | None, str, str]:
    """(exit status, stderr, traceback): the command in a thread of its own (some start an
    event loop), with what it prints kept."""

    def call() -> tuple[int | None, str, str]:
        said = io.StringIO()
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            try:
                return main(["--no-progress", *argv]), said.getvalue(), ""
            except SystemExit as e:
                return int(e.code or 0), said.getvalue(), ""
            except BaseException as e:  # what this test is for: nothing may come out raw
                return None, said.getvalue(), "".join(traceback.format_exception(e))

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


def _params(cases: list[Case]) -> list[object]:
    return [
        pytest.param(folder, build, kind, id=f"{name} [{kind}]")
        for name, folder, kinds, build in cases
        for kind in kinds
    ]


def _check(tmp_path: Path, folder: bool, build, kind: str) -> None:  # type: ignore[no-untyped-def]
    _inputs(tmp_path)
    bad = make(kind, tmp_path / ("X" if folder else "X.json"), folder)
    status, said, raised = _run(build(tmp_path, bad))
    assert not raised, f"a traceback reached the user:\n{raised}"
    assert isinstance(status, int)
    if status != 0:
        assert said.strip(), "failed without a word"
        assert "Traceback" not in said


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "build", "kind"), _params(CASES))
def test_bad_input_gets_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: bool, build, kind: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    _check(tmp_path, folder, build, kind)


@pytest.mark.parametrize(("folder", "build", "kind"), _params(QUALITY))
def test_quality_inputs_and_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rendered: Path, folder: bool, build, kind
) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    for name in ("objects", "labels.csv"):
        (tmp_path / name).symlink_to(rendered / name)
    _check(tmp_path, folder, build, kind)


def test_the_readme_quality_command_names_the_weights_and_the_ways_to_give_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rendered: Path
) -> None:
    pytest.importorskip("transformers")
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    argv = ["curate", "4d", "quality", "train", str(rendered / "objects"), "--labels",
            str(rendered / "labels.csv"), "--weights", "openai/clip-vit-base-patch32",
            "--out", "q/"]  # fmt: skip
    status, said, raised = _run(argv)
    assert not raised and status == 2, raised
    said = " ".join(said.split())  # the console wraps long lines
    assert "'openai/clip-vit-base-patch32'" in said
    assert "not in the Hugging Face cache" in said and constants.HF_HUB_CACHE in said
    assert "HF_HUB_OFFLINE is set" in said and "hf download openai/clip-vit-base-patch32" in said
    assert "a folder holding config.json and the weights" in said


def test_a_message_into_a_pipe_is_one_line_with_its_path_whole(tmp_path: Path) -> None:
    """Into a pipe or a log, rich folded messages at 80 columns, anywhere in a word: a path
    came out as ".../vid" and "eos/..." on two lines (and tests passed or failed with the length
    of their temporary folder). A terminal still folds at its own width."""
    import os
    import subprocess
    import sys

    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "runs" / "no-such-run"
    command = [sys.executable, "-m", "vidbench.cli", "run", "--out", str(deep), "--stage", "report"]
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if str(deep) in line]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert len(lines[0]) > 80
