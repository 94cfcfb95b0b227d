"""Videos cut short or too short: refused by the probe, listed by `validate` for every benchmark,
recorded by `run` as media errors naming the file; never sampled from the frames that happen to
decode. And the default sizes of frames and grids."""

from __future__ import annotations

import json
import re
from pathlib import Path

import av
import numpy as np
import pytest

from conftest import make_qa_dataset
from mmworld_support import make_mmworld
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE, MediaError
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.check import video_problem
from vidbench.media.decode import probe
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.media.spec import GRID_MAX_SIDE, FrameSpec
from vidbench.models.registry import load_model
from vidbench.registry import get_task
from vidbench.runner.keys import plan_key

RNG = np.random.default_rng(0)
NOISE = [RNG.integers(0, 255, (48, 64, 3), dtype=np.uint8) for _ in range(48)]


def write(path: Path, frames: list[np.ndarray], fmt: str, codec: str, **options: str) -> Path:
    """Frames with PyAV, container options as given (e.g. movflags=faststart)."""
    container = av.open(str(path), "w", format=fmt, options=options)
    stream = container.add_stream(codec, rate=24)
    stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
    for frame in frames:
        container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
    container.mux(stream.encode(None))
    container.close()
    return path


def cut(path: Path, fraction: float = 0.6) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def test_a_faststart_mp4_cut_part_way_is_truncated(tmp_path: Path) -> None:
    video = cut(write(tmp_path / "v.mp4", NOISE, "mp4", "libx264", movflags="faststart"))
    with pytest.raises(MediaError, match=r"v\.mp4: truncated: declares 48 frames, \d+ present"):
        probe(video)


def test_an_mp4_cut_before_its_index_cannot_open(tmp_path: Path) -> None:
    video = cut(write_mp4(tmp_path / "v.mp4", NOISE) or tmp_path / "v.mp4")
    with pytest.raises(MediaError, match=r"v\.mp4: cannot open video"):
        probe(video)


def test_an_empty_file_is_named_empty(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"")
    with pytest.raises(MediaError, match=r"v\.mp4: an empty file \(0 bytes\)"):
        probe(tmp_path / "v.mp4")


def test_a_link_loop_a_broken_link_and_a_folder_are_named(tmp_path: Path) -> None:
    loop, broken, folder = tmp_path / "loop.mp4", tmp_path / "broken.mp4", tmp_path / "dir.mp4"
    loop.symlink_to(loop)
    broken.symlink_to(tmp_path / "gone.mp4")
    folder.mkdir()
    for path, why in ((loop, "a link loop"), (broken, "a link to nothing (broken)"),
                      (folder, "a folder"), (tmp_path / "none.mp4", "not found")):  # fmt: skip
        expected = "video file not found" if why == "not found" else f"video file is {why}"
        with pytest.raises(MediaError, match=f"{path}: {re.escape(expected)}"):
            probe(path)
        with pytest.raises(MediaError, match=re.escape(f"view 0 {expected}")):
            load_frames(MediaRef({0: path}), FrameSpec(frames=2))


@pytest.mark.parametrize(
    ("fmt", "codec", "name"), [("matroska", "libx264", "v.mkv"), ("webm", "libvpx-vp9", "v.webm")]
)
def test_containers_without_a_frame_count(fmt: str, codec: str, name: str, tmp_path: Path) -> None:
    """Matroska and WebM declare no frame count: whole files pass, cut ones fail by duration."""
    video = write(tmp_path / name, NOISE, fmt, codec)
    assert probe(video).frame_count == 48
    with pytest.raises(MediaError, match=r"truncated: declares 2\.00 s \(about 48 frames\)"):
        probe(cut(video))


def test_corrupt_data_at_the_end_fails_the_frames_that_need_it(tmp_path: Path) -> None:
    """Bytes present but garbage: the probe cannot know; decoding a frame from it raises,
    naming the file, instead of handing over other frames."""
    video = tmp_path / "v.mp4"
    write_mp4(video, NOISE)
    data = bytearray(video.read_bytes())
    index = data.find(b"moov")
    data[index - len(data) // 4 : index - 8] = bytes(len(data) // 4 - 8)
    video.write_bytes(data)
    spec = FrameSpec(views=(0,), frames=8, sampler="linspace")
    with pytest.raises(MediaError, match=r"v\.mp4: corrupt video"):
        load_frames(MediaRef.single(video), spec)


def test_a_stale_cached_probe_is_not_trusted(tmp_path: Path) -> None:
    """A probe cached by a version without the truncation check is made again."""
    video = cut(write(tmp_path / "v.mp4", NOISE, "mp4", "libx264", movflags="faststart"))
    cache = FrameCache(tmp_path / "cache")
    digest = cache.video_digest(video)
    old = cache.root / "meta" / digest[:2] / f"{digest}.json"  # where v1 kept it
    old.parent.mkdir(parents=True)
    stale = {"frame_count": 48, "width": 64, "height": 48, "fps": 24.0, "keyframes": [0]}
    stale |= {"pts": list(range(48)), "times": [i / 24 for i in range(48)]}
    old.write_text(json.dumps(stale))
    with pytest.raises(MediaError, match="truncated"):
        cache.info(video, digest)


def test_video_problem_counts_frames_in_the_window(tmp_path: Path) -> None:
    video = write(tmp_path / "v.mp4", NOISE, "mp4", "libx264")  # 48 frames, 2 s
    assert video_problem(video, 48) is None
    assert video_problem(video, 49) == "has 48 frames, fewer than the 49 the task samples"
    assert video_problem(video, 16, 1.5, 2.0) == (
        "has 12 frames in its window, fewer than the 16 the task samples"
    )
    assert "before its window's end (9 s)" in (video_problem(video, 8, 0.0, 9.0) or "")


# ------------------------------------------------------------------------- validate, run
def test_validate_4dbench_lists_truncated_and_short_views(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_qa_dataset(tmp_path / "release", n_objects=2)
    views = root / "4D_Object_Question_Answering/data/4d_object_multi_view_videos"
    uid0, uid1 = "0" * 32, f"{1:032x}"
    write(views / uid0 / "view_8_rgb_white_bg.mp4", NOISE, "mp4", "libx264", movflags="faststart")
    cut(views / uid0 / "view_8_rgb_white_bg.mp4")
    write_mp4(views / uid1 / "view_16_rgb_white_bg.mp4", NOISE[:4])
    assert main(["--no-progress", "validate", "4dbench", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"{uid0}: view video is unreadable: truncated: declares 48 frames" in out
    assert f"{uid1}: view video has 4 frames, fewer than the 6 the task samples" in out
    # another task's frames: 12-frame views are too short for frames-13
    assert main(["--no-progress", "validate", "4dbench", str(root), "--frames", "13"]) == 1
    assert "has 12 frames, fewer than the 13" in capsys.readouterr().out


def test_validate_mmworld_and_autoeval_list_short_and_truncated_videos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_mmworld(tmp_path / "mmworld")
    cut(write(root / "vid6" / "vid6.mp4", NOISE, "mp4", "libx264", movflags="faststart"))
    assert main(["--no-progress", "validate", "mmworld", str(root), "--frames", "400"]) == 1
    out = capsys.readouterr().out
    assert "vid6: video vid6 is unreadable: truncated: declares 48 frames" in out
    assert "fewer than the 400 the task samples" in out

    from autoeval_support import rows, write_jsonl

    data = tmp_path / "autoeval"
    (data / "video").mkdir(parents=True)
    write_jsonl(data / "AUTO-EVAL-VIDEO.json", rows()[:2])
    cut(write(data / "video" / "1.mp4", NOISE, "mp4", "libx264", movflags="faststart"))
    write_mp4(data / "video" / "2.mp4", NOISE[:12])
    assert main(["--no-progress", "validate", "autoeval-video", str(data), "--frames", "16"]) == 1
    out = capsys.readouterr().out
    assert "1: clip is unreadable: truncated" in out
    assert "2: clip has 12 frames, fewer than the 16 the task samples" in out


def test_run_records_a_truncated_view_as_a_media_error(tmp_path: Path) -> None:
    root = make_qa_dataset(tmp_path / "release", n_objects=2)
    view = root / f"4D_Object_Question_Answering/data/4d_object_multi_view_videos/{'0' * 32}"
    write(view / "view_1_rgb_white_bg.mp4", NOISE, "mp4", "libx264", movflags="faststart")
    cut(view / "view_1_rgb_white_bg.mp4")
    out = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(root), "--model", "random"]
    code = main([*argv, "--out", str(out), "--cache-dir", str(tmp_path / "frames")])
    assert code == EXIT_INCOMPLETE  # the truncated view's questions have no answer
    results = json.loads((out / "results.json").read_text())
    assert results["errors_by_status"] == {"media": 5}  # the object's five questions
    assert results["n_scored"] == 5
    detail = results["error_details"][0]["error"]
    assert "view_1_rgb_white_bg.mp4: truncated: declares 48 frames" in detail


# -------------------------------------------------------------------------- default sizes
def test_grids_fit_in_the_default_size(tmp_path: Path) -> None:
    """A 1280x720 clip through grid-2x4-square: a 2048 px square, not 5120 px."""
    hd = [np.full((720, 1280, 3), 10 * i, np.uint8) for i in range(10)]
    video = write_mp4(tmp_path / "hd.mp4", hd) or tmp_path / "hd.mp4"
    for variant, side in (("grid-2x4-square", GRID_MAX_SIDE), ("grid-1x8", GRID_MAX_SIDE)):
        spec = get_task(f"autoeval-video:{variant}").frame_spec
        [grid] = load_frames(MediaRef.single(video), spec)
        assert max(decode_image(grid.image.data).size) == side
    [first, *_] = load_frames(MediaRef.single(video), get_task("autoeval-video").frame_spec)
    assert decode_image(first.image.data).size == (768, 432)  # clips default to 768 px
    original = get_task("autoeval-video", max_side=0).frame_spec
    assert original.max_side is None and "max_side" not in original.as_dict()


def test_4dbench_keys_are_unchanged() -> None:
    """The official 4D-Bench frames are as before, and so is every stored answer's key (the
    plan key below was computed before the default sizes existed)."""
    task = get_task("4dbench-qa")
    assert task.frame_spec.as_dict() == {
        "views": [1, 8, 16], "frames": 6, "sampler": "interval", "order": "view-first",
        "timestamps": False, "image_format": "jpeg", "jpeg_quality": 95,
    }  # fmt: skip
    assert plan_key(task.settings(), load_model("random").identity()) == "376eebc367fcddaa71f08b48"
