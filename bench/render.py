"""Frames rendered per second per core by `curate 4d render` (Cycles on the CPU, few samples)
for a generated animated asset (the first scene of `synth 4d --assets`) at 256 px.

    python bench/render.py [--size 256] [--samples 16] [--views 4] [--frames 48] [--device cpu]

One worker, all cores: frames per second = rendered frames / wall time of the render (Blender
start, import and normalisation included); per core = that / os.cpu_count().
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from vidbench.benchmarks.fourd.curate.render import render_manifest
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.synthetic.assets import export_assets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--views", type=int, default=4)
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = export_assets(Path(tmp) / "assets", 1, frames=args.frames, progress=False)
        settings = RenderSettings(
            views=args.views,
            size=args.size,
            max_frames=args.frames,
            samples=args.samples,
            device=args.device,
            threads=os.cpu_count() or 1,
        )
        start = time.perf_counter()
        report = render_manifest(manifest, Path(tmp) / "out", settings, progress=False)
        wall = time.perf_counter() - start
        if not report.rendered:
            raise SystemExit(f"nothing rendered: {[p.message() for p in report.failed]}")
        record = json.loads((Path(tmp) / "out" / report.rendered[0] / "render.json").read_text())
    frames = args.frames + record["frames"] * (args.views - 1)  # first view, then the others
    cores = os.cpu_count() or 1
    print(f"{frames} frames at {args.size} px, {args.samples} samples, {args.device}: {wall:.1f} s")
    rate = frames / wall
    print(f"{rate:.2f} frames/s, {rate / cores:.2f} frames/s per core ({cores} cores)")


if __name__ == "__main__":
    main()
