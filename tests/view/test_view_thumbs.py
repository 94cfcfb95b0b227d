"""Thumbnails are made once for the samples that share their frames (4D-Bench's five questions
about an object, the same sample in two runs), and not at all when the report folder already
holds them: a report built again reads no frame; the command shows its progress and counts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import make_qa_dataset
from vidbench.cli import main
from vidbench.core.records import MediaRef
from vidbench.media.spec import FrameSpec
from vidbench.view.build import ViewOptions, write_report
from vidbench.view.collect import collect_runs
from vidbench.view.thumbs import strip_key
from view_support import run_model


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    root = tmp_path_factory.mktemp("thumbs")
    data = make_qa_dataset(root / "data", n_objects=2)
    cache = root / "cache"
    runs = [run_model(data, m, root / m.replace(":", "-"), cache) for m in ("random", "constant:A")]
    return runs, cache


def _build(runs: list[Path], out: Path):  # type: ignore[no-untyped-def]
    return write_report(collect_runs(runs), ViewOptions(out))


def test_shared_frames_are_made_once_and_kept_for_the_next_build(
    two_runs: tuple[list[Path], Path], tmp_path: Path
) -> None:
    runs, cache = two_runs
    shutil.rmtree(cache, ignore_errors=True)  # a cold frame cache: frames are decoded
    out = tmp_path / "report"
    built = _build(runs, out)
    assert built.samples == 10  # 2 objects x 5 questions, in both runs
    assert cache.is_dir()
    page_data = (out / "data" / "samples-000.js").read_text()

    shutil.rmtree(cache)
    again = _build(runs, out)
    assert not cache.exists()  # not one frame was read
    assert (out / "data" / "samples-000.js").read_text() == page_data
    assert (built.strips_made, built.strips_reused) == (2, 0)  # one strip per object
    assert (again.strips_made, again.strips_reused) == (0, 2)

    # a thumbnail gone, or a video changed: that object's strip is made again
    thumbs = sorted((out / "thumbs").rglob("*.jpg"))
    thumbs[0].unlink()
    once_more = _build(runs, out)
    assert once_more.strips_made >= 1 and once_more.strips_made + once_more.strips_reused == 2
    assert thumbs[0].is_file()


def test_the_command_shows_progress_and_counts(
    two_runs: tuple[list[Path], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, _ = two_runs
    out = tmp_path / "report"
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "thumbnails and videos" in printed.out and "2/2" in printed.out  # the progress bar
    assert "thumbnails of 2 frame strips made, 0 already there" in printed.err
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    assert "thumbnails of 0 frame strips made, 2 already there" in capsys.readouterr().err


def test_a_video_rewritten_with_its_old_size_and_mtime_gets_new_thumbnails(
    tmp_path: Path,
) -> None:
    video = tmp_path / "view_0.mp4"
    video.write_bytes(b"a" * 100)
    media, spec = MediaRef.single(video), FrameSpec()
    old = strip_key(media, spec)
    stat = video.stat()
    video.write_bytes(b"b" * 100)  # in place, as `cp -p` or `rsync -t` leave it
    os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    while video.stat().st_ctime_ns == stat.st_ctime_ns:  # a clock tick later (coarse clocks)
        os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert strip_key(media, spec) != old
