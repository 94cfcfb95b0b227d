"""The frame cache's video digests: remembered on disk by the file's stat, never handed back
for other bytes."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import solid_frames
from vidbench.core.messages import Message
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache, file_digest
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec
from vidbench.runner.keys import request_key


def test_a_file_rewritten_with_its_old_size_and_mtime_gets_its_new_digest(tmp_path: Path) -> None:
    video = tmp_path / "view_0.mp4"
    video.write_bytes(b"a" * 100)
    cache = FrameCache(tmp_path / "cache")
    old = cache.video_digest(video)
    stat = video.stat()
    video.write_bytes(b"b" * 100)  # in place, as `cp -p` or `rsync -t` leave it
    os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    while video.stat().st_ctime_ns == stat.st_ctime_ns:  # a clock tick later (coarse clocks)
        os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.video_digest(video) == file_digest(video) != old
    assert FrameCache(tmp_path / "cache").video_digest(video) == file_digest(video)


def test_a_digest_is_remembered_on_disk_and_a_damaged_one_made_again(tmp_path: Path) -> None:
    video = tmp_path / "view_0.mp4"
    video.write_bytes(b"a" * 100)
    FrameCache(tmp_path / "cache").video_digest(video)
    [memo] = (tmp_path / "cache" / "digests").rglob("*-*")
    assert memo.read_text() == file_digest(video)
    memo.write_text("f" * 32)  # what a later run finds there is what it uses: no hashing
    assert FrameCache(tmp_path / "cache").video_digest(video) == "f" * 32
    memo.write_text("not a digest")
    assert FrameCache(tmp_path / "cache").video_digest(video) == file_digest(video)
    assert memo.read_text() == file_digest(video)


def test_a_cache_where_no_digest_can_be_written_still_gives_the_digest(tmp_path: Path) -> None:
    video = tmp_path / "view_0.mp4"
    video.write_bytes(b"a" * 100)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "digests").write_text("")  # not a folder: every write fails
    assert FrameCache(tmp_path / "cache").video_digest(video) == file_digest(video)


def test_a_frame_and_a_grid_of_an_edited_video_have_other_keys(tmp_path: Path) -> None:
    video = tmp_path / "view_0.mp4"
    cache = FrameCache(tmp_path / "cache")

    def keys() -> list[str]:
        found = []
        for spec in (FrameSpec(frames=2), FrameSpec(frames=2, grid="1x2")):
            frames = load_frames(MediaRef.single(video), spec, cache)
            messages = [Message("user", tuple(f.image for f in frames))]
            found.append(request_key("plan", "s1", messages))
        return found

    write_mp4(video, solid_frames(4, seed=1))
    first = keys()
    write_mp4(video, solid_frames(4, seed=2))  # same name, same frame count, other pixels
    again = keys()
    assert first[0] != again[0] and first[1] != again[1]
