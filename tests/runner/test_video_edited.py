"""A video edited in place (same name, same frame count, other pixels) is asked about again: the
store keys hold the video's content, not only its frames' labels."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import make_qa_dataset, solid_frames
from vidbench.cli import main
from vidbench.media.encode import write_mp4

MODEL = "python:support_models:SeesPixels"
EDITED = f"{1:032x}"  # the second object


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return make_qa_dataset(tmp_path / "data", n_objects=3)  # 15 questions


def _videos(data: Path, uid: str) -> list[Path]:
    folder = data / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos"
    return sorted((folder / uid).glob("*.mp4"))


def _run(data: Path, out: Path, cache: Path) -> int:
    where = ["--data", str(data), "--out", str(out), "--cache-dir", str(cache)]
    return main(["--no-progress", "run", "4dbench-qa", "--model", MODEL, *where])


def _answers(out: Path) -> dict[str, str]:
    rows = (json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines())
    return {row["id"]: row["raw_output"] for row in rows}


def _asked(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.slow
def test_a_video_edited_in_place_is_asked_again_its_questions_only(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "asked.log"
    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(log))
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert _run(data, out, cache) == 0
    assert len(_asked(log)) == 15
    before = _answers(out)
    kept = tmp_path / "kept"
    kept.mkdir()
    for path in _videos(data, EDITED):
        shutil.copyfile(path, kept / path.name)

    for k, path in enumerate(_videos(data, EDITED)):  # re-rendered: same name and frame count
        write_mp4(path, solid_frames(12, seed=100 + k))
    log.unlink()
    assert _run(data, out, cache) == 0
    assert sorted(_asked(log)) == sorted(i for i in before if i.startswith(EDITED))
    after = _answers(out)

    # what the rerun reports is what a fresh run on the edited data reports
    assert _run(data, tmp_path / "fresh", tmp_path / "fresh-cache") == 0
    assert after == _answers(tmp_path / "fresh")
    assert any(after[i] != before[i] for i in before if i.startswith(EDITED))
    assert all(after[i] == before[i] for i in before if not i.startswith(EDITED))

    for path in _videos(data, EDITED):  # put back: the answers to these bytes are stored
        shutil.copyfile(kept / path.name, path)
    log.unlink()
    assert _run(data, out, cache) == 0
    assert _asked(log) == []
    assert _answers(out) == before  # the stored answers to the original, not the latest ones


def test_a_touched_video_same_bytes_is_hashed_again_and_not_asked_again(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "asked.log"
    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(log))
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert _run(data, out, cache) == 0
    for path in _videos(data, EDITED):
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    log.unlink()
    assert _run(data, out, cache) == 0
    assert _asked(log) == []  # same content, same keys: every answer reused
