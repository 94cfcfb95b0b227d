"""Frames prepared per second for 4D-Bench input (3 views x 6 frames of 24-view, 512 px,
96-frame mp4s): cold frame cache, warm frame cache, and a decode-every-frame baseline.

    python bench/frames.py [--objects 12] [--workdir /tmp/vidbench-bench-frames]

The baseline is what a naive loader does: decode every frame of each needed view to RGB, keep
the sampled ones, encode them as JPEG. Cold is vidbench's loader with an empty cache (demux to find
the frames, decode only up to the last needed frame, convert and encode only the needed ones,
write the cache). Warm is the same call again: the cache answers, nothing is decoded.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import av

from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.media.cache import FrameCache
from vidbench.media.frames import load_frames
from vidbench.media.images import encode_image
from vidbench.media.sampling import sample_indices
from vidbench.media.spec import FrameSpec


def decode_everything(samples, spec: FrameSpec) -> int:
    done = 0
    for sample in samples:
        for view in spec.views:
            with av.open(str(sample.media.videos[view])) as container:
                every = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
            for i in sample_indices(len(every), spec.frames, spec.sampler):
                encode_image(every[i], spec.image_format, spec.jpeg_quality)
                done += 1
    return done


def with_cache(samples, spec: FrameSpec, cache: FrameCache) -> int:
    return sum(len(load_frames(s.media, spec, cache)) for s in samples)


def timed(fn, *args) -> tuple[int, float]:
    start = time.perf_counter()
    n = fn(*args)
    return n, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=12)
    parser.add_argument("--workdir", default="/tmp/vidbench-bench-frames")
    args = parser.parse_args()
    work = Path(args.workdir)
    data = work / f"data-{args.objects}"
    if not (data / fourd_bench.RELEASE_FOLDERS[fourd_bench.QA_FILE]).is_dir():
        print(f"generating {args.objects} objects, 24 views x 96 frames at 512 px ...")
        generate(data, objects=args.objects, seed=1, frames=96, size=512, progress=True)
    # one question per object, so each object's views are prepared once per pass
    by_uid = {s.metadata["uid"]: s for s in fourd_bench.load_qa(data).items}
    samples = list(by_uid.values())
    spec = SPEC  # official: views 1, 8, 16 x 6 frames, interval sampler, original size
    cache_dir = work / "cache"
    shutil.rmtree(cache_dir, ignore_errors=True)

    n_base, t_base = timed(decode_everything, samples, spec)
    n_cold, t_cold = timed(with_cache, samples, spec, FrameCache(cache_dir))
    n_warm, t_warm = timed(with_cache, samples, spec, FrameCache(cache_dir))
    assert n_base == n_cold == n_warm == len(samples) * spec.n_images

    print(
        f"{len(samples)} objects x {spec.n_images} frames (views {list(spec.views)}, "
        f"{spec.frames}/view, {spec.sampler}), single thread"
    )
    for name, n, t in (
        ("decode-every-frame baseline", n_base, t_base),
        ("cold cache", n_cold, t_cold),
        ("warm cache", n_warm, t_warm),
    ):
        print(f"  {name:28s} {n / t:9.1f} frames/s  ({t:.2f} s)")
    print(
        f"  cold / baseline speed: {t_base / t_cold:.2f}x;  warm / cold speed: "
        f"{t_cold / t_warm:.1f}x"
    )


if __name__ == "__main__":
    main()
