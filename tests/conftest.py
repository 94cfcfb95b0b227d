"""Shared fixtures: small datasets in the official layouts, written by the tests."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from vidbench.media.encode import write_mp4
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.testing import ChatServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TESTS = Path(__file__).parent
# A part of the real AutoEval-Video data (rules file, sample predictions, 8 clips made smaller),
# with its licence: tests/data/autoeval-video/NOTICE.
AUTOEVAL = TESTS / "data" / "autoeval-video"
AUTOEVAL_CLIPS = 8  # clips in AUTOEVAL / "video"
sys.path.insert(0, str(TESTS))  # test-only model backends (python:support_models:...)
pytest_plugins = ["browser", "vllm_support"]  # Playwright fixtures, the stand-in vllm

SUBTASK_SUFFIXES = {
    "Object Counting": "object_counting",
    "Temporal Relationship": "temporal_relationship",
    "Action": "motion",
    "Spatial Relationship": "spatial_relationship",
    "Appearance": "appearance",
}


def solid_frames(n: int, size: int = 32, seed: int = 0) -> list[np.ndarray]:
    """`n` frames whose colour encodes the frame index (red channel = 8 * index mod 256)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=3)
    return [np.full((size, size, 3), ((8 * t) % 256, base[1], base[2]), np.uint8) for t in range(n)]


def write_object_views(data_dir: Path, uid: str, frames: int = 12, views: int = 24) -> None:
    for k in range(views):
        path = data_dir / "4d_object_multi_view_videos" / uid / f"view_{k}_rgb_white_bg.mp4"
        write_mp4(path, solid_frames(frames, seed=k))


def make_qa_dataset(root: Path, n_objects: int = 4, frames: int = 12) -> Path:
    """A release root with QA for `n_objects` objects x 5 subtasks; gold answers cycle A..D."""
    data_dir = root / "4D_Object_Question_Answering" / "data"
    qa: dict[str, dict] = {}
    for i in range(n_objects):
        uid = f"{i:032x}"
        write_object_views(data_dir, uid, frames)
        for j, (category, suffix) in enumerate(SUBTASK_SUFFIXES.items()):
            qa[f"{uid}_{suffix}"] = {
                "Question": f"Question {j} about object {i}?",
                "Options": [f"({letter}) option {letter}" for letter in "ABCD"],
                "Answer index": (i + j) % 4 + 1,
                "Category": category,
            }
    (data_dir / "4d_qa.json").write_text(json.dumps(qa, indent=1))
    return root


def random_qa_run(data: Path, tmp_path: Path) -> Run:
    """A run of the built-in random model over a 4D-Bench QA folder, into tmp_path/out with its
    own frame cache, no progress bars."""
    config = RunConfig(
        task="4dbench-qa",
        data=str(data),
        model="random",
        out=str(tmp_path / "out"),
        cache_dir=str(tmp_path / "cache"),
        progress=False,
    )
    return Run(config)


def make_caption_dataset(root: Path, uids: list[str], frames: int = 8) -> Path:
    """A release root with the captioning data of `uids`: their views and five human captions
    each ("a shape number I spins, take K")."""
    data = root / "4D_Object_Captioning" / "data"
    for uid in uids:
        write_object_views(data, uid, frames=frames)
    with (data / "human_annotations.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["folder_name", *(f"caption_{k}" for k in range(1, 6))])
        for i, uid in enumerate(uids):
            writer.writerow([uid, *(f"a shape number {i} spins, take {k}" for k in range(5))])
    return root


def vary_question_lengths(root: Path, sentences: int = 1) -> Path:
    """Lengthen question i of a QA release by i * `sentences` sentences, so batched prompts need
    padding (and a small random model's answers differ from question to question)."""
    path = root / "4D_Object_Question_Answering" / "data" / "4d_qa.json"
    qa = json.loads(path.read_text())
    for i, record in enumerate(qa.values()):
        record["Question"] += " Look closely." * i * sentences
    path.write_text(json.dumps(qa))
    return root


@pytest.fixture(scope="session")
def qa_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read-only release root shared by tests (copy it before changing anything)."""
    return make_qa_dataset(tmp_path_factory.mktemp("qa_release"))


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ChatServer]:
    """One fake chat server per test module (starting one per test would be slow)."""
    with ChatServer() as server:
        yield server


@pytest.fixture
def fake(shared_server: ChatServer) -> Callable[..., ChatServer]:
    """The module's running server, reset to the settings a test asks for: fake(latency=...)."""
    shared_server.reset()
    return shared_server.reset


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from this checkout, once per session (a user's install)."""
    from examples_support import build_dist

    return build_dist(tmp_path_factory.mktemp("dist") / "dist")


def default_sigint() -> None:
    """For subprocesses a test interrupts with SIGINT: a shell without job control (a CI step, a
    script's `cmd &`) starts commands with SIGINT ignored, and Python then installs no Ctrl-C
    handler; the child gets the default back, as a terminal's Ctrl-C would find it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# The example plugins of docs/examples (the benchmark `toybench`, the model backend `pickmodel`),
# installed as pip installs them, and toy data for them (tests/plugins, the tutorials' code).
@pytest.fixture(scope="session")
def toybench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from examples_support import install_example

    return install_example("toy-benchmark", tmp_path_factory.mktemp("toybench") / "site")


@pytest.fixture(scope="session")
def pickmodel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from examples_support import install_example

    return install_example("pick-backend", tmp_path_factory.mktemp("pickmodel") / "site")


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tutorial's toy data (four clips, gold A, B, C, A) and a row whose video is missing."""
    from examples_support import EXAMPLES

    data = tmp_path_factory.mktemp("toy")
    script = EXAMPLES / "toy-benchmark" / "make_toy_data.py"
    subprocess.run([sys.executable, str(script), str(data), "--broken"], check=True, timeout=120)
    return data
