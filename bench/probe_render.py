"""Seconds per object of the Blender probe (`vidbench synth 4d --renderer blender`) for the
official input, 3 views x 48 frames, at 256 px on this machine's CPU, and the share of it that is
Blender's own render time (target: 0.8 or more, so that the rest of the pipeline does not
dominate).

    python bench/probe_render.py [--objects 2] [--size 256] [--frames 48] [--samples 4]

One worker with all cores, as `synth 4d --renderer blender` runs by default. The whole build is
timed (planning, glTF assets, Blender's start and import in each worker, rendering, encoding,
the visibility ray casts, checking and writing the dataset); Blender's render time is the time
spent inside its render call (`bpy.ops.render.render`), which the worker adds up.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from vidbench.benchmarks.fourd.probe.build import build_probe
from vidbench.benchmarks.fourd.probe.plan import ProbeSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--samples", type=int, default=4)
    args = parser.parse_args()
    settings = ProbeSettings(
        objects=args.objects, frames=args.frames, size=args.size, samples=args.samples
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        report = build_probe(Path(tmp) / "probe", settings, progress=False)
        wall = time.perf_counter() - start
    if report.failed or len(report.timings) != args.objects:
        raise SystemExit(f"not every object rendered: {[p.message() for p in report.failed]}")
    render = sum(t["render_s"] for t in report.timings)
    visibility = sum(t["visibility_s"] for t in report.timings)
    worker = sum(t["worker_s"] for t in report.timings)
    frames = sum(t["frames"] for t in report.timings)
    per_object = wall / args.objects
    print(
        f"{args.objects} objects, 3 views x {args.frames} frames at {args.size} px, "
        f"{args.samples} samples, Cycles on {os.cpu_count()} CPU cores"
    )
    print(f"{per_object:.1f} s per object ({frames / wall:.2f} frames/s over the whole build)")
    n = args.objects
    print(f"Blender's render time: {render / n:.1f} s per object, share {render / wall:.3f}")
    print(
        f"the rest per object: visibility ray casts {visibility / n:.2f} s, encoding and the "
        f"worker's Blender setup {(worker - render - visibility) / n:.2f} s, outside the workers "
        f"(planning, assets, process starts, checks, files) {(wall - worker) / n:.2f} s"
    )


if __name__ == "__main__":
    main()
