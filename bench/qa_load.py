"""Loading 4D-Bench QA data: `load_qa` (every sample at once) and `iter_qa` (one at a time, none
held), each in a fresh process, for each data folder given.

    python bench/qa_load.py DATA [DATA ...]

For each folder and way it prints the samples and problems read, the wall time and the peak
memory (maximum resident set) of the process, and that peak less the one after the imports.
A data folder is one `--data` takes (bench/scale.py's keep folders are such folders).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

WAYS = ("load_qa", "iter_qa")


def measure(way: str, data: Path) -> None:
    """In this process: read `data` the `way` named and print the figures."""
    from vidbench.benchmarks.fourd import loader
    from vidbench.tasks.problems import Problem

    imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if way == "load_qa":
        loaded = loader.load_qa(data)
        samples, problems = len(loaded.items), len(loaded.problems)
    else:
        samples = problems = 0
        for item in loader.iter_qa(data):
            problems += isinstance(item, Problem)
            samples += not isinstance(item, Problem)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        f"{data}  {way}: {samples} samples, {problems} problems, {wall:.2f} s, "
        f"peak RSS {peak / 1024:.1f} MiB ({(peak - imported) / 1024:+.1f} MiB over the imports)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", type=Path)
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args()
    if args.way:
        measure(args.way, args.data[0])
        return
    for data in args.data:
        for way in WAYS:  # a fresh process each: ru_maxrss is the process's peak
            subprocess.run([sys.executable, __file__, "--way", way, str(data)], check=True)


if __name__ == "__main__":
    main()
