"""Simultaneous requests for the same video and FrameSpec decode it once: the frame loader merges
concurrent cache misses (and probes), in threads and through a whole run."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import random_qa_run, solid_frames
from vidbench.core.errors import MediaError
from vidbench.core.records import MediaRef
from vidbench.media import cache as cache_module
from vidbench.media import frames as frames_module
from vidbench.media.cache import FrameCache
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Decodes and probes by video file name; each decode takes a while, so requests overlap."""
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    decode, probe = frames_module.decode_frames, cache_module.probe

    def slow_decode(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            counts[f"decode {path.parent.name}/{path.name}"] += 1
        time.sleep(0.2)
        return decode(path, *args, **kwargs)

    def counted_probe(path: Path):  # type: ignore[no-untyped-def]
        with lock:
            counts[f"probe {path.parent.name}/{path.name}"] += 1
        time.sleep(0.05)
        return probe(path)

    monkeypatch.setattr(frames_module, "decode_frames", slow_decode)
    monkeypatch.setattr(cache_module, "probe", counted_probe)
    return counts


def test_concurrent_misses_on_one_video_decode_it_once(
    tmp_path: Path, counted: Counter[str]
) -> None:
    video = tmp_path / "clip.mp4"
    write_mp4(video, solid_frames(48), fps=24)
    spec = FrameSpec(views=(0,), frames=6, sampler="linspace")
    cache = FrameCache(tmp_path / "cache")
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda _: load_frames(MediaRef.single(video), spec, cache), range(8))
        )
    name = f"{tmp_path.name}/clip.mp4"
    assert counted == {f"decode {name}": 1, f"probe {name}": 1}
    first = [(f.index, f.image.data) for f in results[0]]
    assert all([(f.index, f.image.data) for f in r] == first for r in results)
    # another FrameSpec of the same video is its own decode; the probe is reused
    load_frames(MediaRef.single(video), spec.with_(frames=4), cache)
    assert counted == {f"decode {name}": 2, f"probe {name}": 1}


def test_a_video_that_fails_to_decode_fails_once_for_all_waiters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    video = tmp_path / "clip.mp4"
    write_mp4(video, solid_frames(24), fps=24)
    calls: list[Path] = []

    def broken_decode(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(path)
        time.sleep(0.2)  # the other requests arrive meanwhile and wait
        raise MediaError(f"{path}: truncated at frame 3")

    monkeypatch.setattr(frames_module, "decode_frames", broken_decode)
    spec = FrameSpec(views=(0,), frames=4, sampler="linspace")
    cache = FrameCache(tmp_path / "cache")

    def load(_: int) -> str:
        try:
            load_frames(MediaRef.single(video), spec, cache)
        except MediaError as e:
            return str(e)
        return "loaded"

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(load, range(6)))
    assert len(calls) == 1
    assert outcomes == [f"{video}: truncated at frame 3"] * 6
    assert load(0).endswith("truncated at frame 3") and len(calls) == 2  # later: tried again


def test_a_run_decodes_each_view_once(
    tmp_path: Path, qa_release: Path, counted: Counter[str]
) -> None:
    random_qa_run(qa_release, tmp_path).run()
    # 4 objects x 5 questions each, the official views 1, 8, 16: 12 view files, whose contents
    # repeat across objects (3 distinct videos; the cache is content-addressed). Twenty questions
    # asked for their frames at once, and each distinct video was probed and decoded once.
    assert sum(n for k, n in counted.items() if k.startswith("decode")) == 3
    assert sum(n for k, n in counted.items() if k.startswith("probe")) == 3
    assert set(counted.values()) == {1}
