"""Time the procedural 4D-Bench generator: `python bench/synth4d.py [--objects N] ...`."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from vidbench.benchmarks.fourd.synthetic import generate


def main() -> None:
    """Generate into a temporary directory and print the wall time in seconds."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--objects", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--views", type=int, default=24)
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        generate(
            Path(tmp) / "synth4d",
            objects=args.objects,
            seed=args.seed,
            views=args.views,
            frames=args.frames,
            size=args.size,
            workers=args.workers,
        )
        seconds = time.perf_counter() - start
    print(
        f"synthetic4d generate(objects={args.objects}, views={args.views}, "
        f"frames={args.frames}, size={args.size}): {seconds:.2f} s"
    )


if __name__ == "__main__":
    main()
