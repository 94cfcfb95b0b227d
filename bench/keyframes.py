"""Keyframe selection cost on an MMWorld-like video (default 640x360, 30 fps, 60 s, a cut every
few seconds): uniform sampling, keyframes with a cold cache (analysis + decode), keyframes with a
warm cache, and the analysis alone.

    python bench/keyframes.py [--seconds 60] [--width 640] [--height 360] [--frames 8]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from vidbench.core.records import MediaRef
from vidbench.media import keyframes
from vidbench.media.cache import FrameCache
from vidbench.media.decode import probe
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec


def make_video(path: Path, seconds: int, width: int, height: int) -> None:
    """Shots of 2-7 s, each a textured frame panning slowly (so frames within a shot differ)."""
    rng = np.random.default_rng(0)
    fps, frames, t = 30, [], 0
    while t < seconds * fps:
        length = int(rng.integers(2 * fps, 7 * fps))
        texture = rng.integers(0, 255, (height, width + length, 3)).astype(np.uint8)
        frames += [texture[:, s : s + width] for s in range(min(length, seconds * fps - t))]
        t += length
    write_mp4(path, frames, fps=fps, preset="ultrafast")


def timed(fn, *args) -> tuple[object, float]:
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--workdir", default="/tmp/vidbench-bench-keyframes")
    args = parser.parse_args()
    work = Path(args.workdir)
    video = work / f"video-{args.width}x{args.height}-{args.seconds}s.mp4"
    if not video.is_file():
        print(f"writing {video} ...")
        make_video(video, args.seconds, args.width, args.height)
    info = probe(video)
    print(f"{info.frame_count} frames, {info.width}x{info.height}, {info.fps:.0f} fps")
    media = MediaRef.single(video)
    cache = FrameCache(work / f"cache-{time.time_ns()}")
    uniform = FrameSpec(views=(0,), frames=args.frames, sampler="linspace")
    picked = FrameSpec(views=(0,), frames=args.frames, sampler="keyframes")
    _, t_uniform = timed(load_frames, media, uniform, None)
    _, t_analysis = timed(keyframes.select, video, info, list(range(info.frame_count)), args.frames)
    frames, t_cold = timed(load_frames, media, picked, cache)
    _, t_warm = timed(load_frames, media, picked, cache)
    print(f"uniform {args.frames} frames (no cache):      {t_uniform * 1000:8.1f} ms")
    print(f"keyframe analysis alone:                 {t_analysis * 1000:8.1f} ms")
    print(f"keyframes, cold cache (analysis+decode): {t_cold * 1000:8.1f} ms")
    print(f"keyframes, warm cache:                   {t_warm * 1000:8.1f} ms")
    print("picked frames:", [f.index for f in frames])  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
