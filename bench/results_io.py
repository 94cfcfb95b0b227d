"""What the typed results files cost: writing and reading --samples (10,000) sample rows of a
4D-Bench-QA-shaped run through ResultsDir (report/schema.py models), next to the same lines
as plain JSON (core/files.py).

    python bench/results_io.py [--samples 10000] [--repeat 3]

Prints the best of --repeat timings of each, in seconds and microseconds a row.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vidbench.core.files import read_jsonl, write_jsonl
from vidbench.media.frame import FrameRecord
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import AnsweredFields, SampleRow
from vidbench.scoring.outcome import SampleScore, graded

SUBTASKS = ("Object Counting", "Temporal Relationship", "Action", "Spatial Relationship",
            "Appearance")  # fmt: skip


def scored(n: int) -> list[tuple[AnsweredFields, SampleScore]]:
    """What the score stage has for 4D-Bench QA (18 frames each, a short reply): the run's
    fields and the task's score of each sample."""
    rng = random.Random(0)
    frames: list[FrameRecord] = [
        {"view": v, "index": i, "time_s": i / 24} for v in (1, 8, 16) for i in range(6)
    ]
    out = []
    for k in range(n):
        gold, parsed = "ABCD"[rng.randrange(4)], "ABCD"[rng.randrange(4)]
        answer: AnsweredFields = {"id": f"{k // 5:032x}_{k % 5}", "prompt_hash": f"{k:016x}",
                                  "frames": frames, "raw_output": f"({parsed})"}  # fmt: skip
        score = SampleScore(outcome=graded(parsed == gold), parsed=parsed, gold=gold,
                            unparsed=False, groups={"subtask": SUBTASKS[k % 5]})  # fmt: skip
        out.append((answer, score))
    return out


def best(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    parts = scored(args.samples)
    with tempfile.TemporaryDirectory() as tmp:
        typed_dir, plain_dir = ResultsDir(Path(tmp) / "typed"), ResultsDir(Path(tmp) / "plain")
        rows = [SampleRow.scored(*part) for part in parts]
        plain = [row.record() for row in rows]
        timings = {
            "make typed rows (SampleRow.scored)": best(
                args.repeat, lambda: [SampleRow.scored(*part) for part in parts]
            ),
            "write plain JSON lines": best(
                args.repeat, lambda: write_jsonl(plain_dir.file("samples.jsonl"), plain)
            ),
            "write typed rows": best(
                args.repeat, lambda: typed_dir.write_scored(rows, {"requests": len(rows)})
            ),
            "read plain JSON lines": best(
                args.repeat, lambda: read_jsonl(typed_dir.file("samples.jsonl"))
            ),
            "read typed rows": best(args.repeat, typed_dir.read_samples),
            "rows back to records (file lines)": best(
                args.repeat, lambda: [row.record() for row in rows]
            ),
        }
    for what, seconds in timings.items():
        per_row = 1e6 * seconds / args.samples
        print(f"{what:38s} {seconds:7.3f} s  {per_row:6.1f} us a row")


if __name__ == "__main__":
    main()
