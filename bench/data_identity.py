"""What keeping a results folder to one data costs a run (runner/data_identity.py): the
fingerprints of --samples (50,000) samples, recording them in a fresh store, and reading them back
and checking a rerun over the same data, as every infer, judge and score stage does.

    python bench/data_identity.py [--samples 50000] [--repeat 3]

Prints the best of --repeat timings of each step, in seconds and microseconds a sample.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from results_io import best  # the best of N timings (bench/ is the script's folder)
from vidbench.core.records import MediaRef, Sample
from vidbench.runner import data_identity


def samples(n: int) -> list[Sample]:
    """Video QA samples of a declared benchmark's shape: one video, a window, four options."""
    return [
        Sample(
            f"q{k}",
            "custom",
            "mcq",
            MediaRef({0: Path(f"/data/videos/clip{k // 5}.mp4")}, 1.5, 9.25),
            f"What happens in clip {k // 5} (question {k})?",
            tuple(f"event {k}{letter}" for letter in "abcd"),
            "ABCD"[k % 4],
        )
        for k in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    found = samples(args.samples)
    identity = data_identity.identity_of(found, "/data")
    with tempfile.TemporaryDirectory() as tmp:
        folders = iter(Path(tmp) / f"run-{i}" for i in range(args.repeat))
        stored = Path(tmp) / "stored"
        data_identity.record(stored, identity)

        def check() -> None:
            kept = data_identity.stored_identity(stored)
            data_identity.check_same_data(kept, data_identity.identity_of(found, "/data"), stored)

        timings = {
            "fingerprints": best(args.repeat, lambda: data_identity.identity_of(found, "/data")),
            "record in a new store": best(
                args.repeat, lambda: data_identity.record(next(folders), identity)
            ),
            "read back and check a rerun": best(args.repeat, check),
        }
    print(f"{args.samples:,} samples, best of {args.repeat}:")
    for step, seconds in timings.items():
        print(f"  {step:<28} {seconds:7.3f} s  {1e6 * seconds / args.samples:6.1f} us/sample")


if __name__ == "__main__":
    main()
