"""`vidbench view --serve`: the report over HTTP on 127.0.0.1, from a process of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_qa_dataset
from vidbench.cli import main
from view_support import run_model


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def report(tmp_path: Path) -> Path:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    run = run_model(data, "random", tmp_path / "run", tmp_path / "cache")
    assert main(["view", str(run), "--out", str(tmp_path / "report")]) == 0
    return tmp_path / "report"


@pytest.fixture
def served(report: Path) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "vidbench.cli", "view", "--serve", "--out", str(report)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "serving REPORT on http://127.0.0.1:PORT/ ..."
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line
        url = found.group(0)
        deadline = time.monotonic() + 20
        while True:
            try:
                get(url)
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "not serving"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_serve_gives_the_page_data_thumbnails_and_videos(report: Path, served: str) -> None:
    assert get(served) == (200, (report / "index.html").read_bytes())
    status, meta = get(served + "data/meta.js")
    assert status == 200 and meta.startswith(b"vidbenchView.meta(")
    assert get(served + "data/samples-000.js")[1] == (report / "data/samples-000.js").read_bytes()
    video = sorted((report / "videos").iterdir())[0]  # a symlink to the data's video
    assert get(f"{served}videos/{video.name}") == (200, video.resolve().read_bytes())
    assert get(served + "..%2frun%2fstore.sqlite")[0] == 404
    assert get(served + "nothing.js")[0] == 404


def test_serve_without_a_report_is_refused(tmp_path: Path) -> None:
    code = main(["view", "--serve", "--out", str(tmp_path / "empty")])
    assert code == 2
