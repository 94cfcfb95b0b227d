"""Scale-out on Ray: the infer stage of a run sharded over 1, 2 and 4 workers on this machine,
with a stand-in model of fixed latency and per-worker capacity (testing/standin_model.py), so
the ideal is known: workers x capacity / latency requests per second.

    PYTHONPATH=src python bench/ray_scale.py [--requests 600] [--latency 0.25] [--capacity 8]

Measured: `wall` (the whole infer stage, starting the workers included) and `steady` (answers
per second from the start of the first answered request to the last answer, i.e. once the
workers are up).
Efficiency is steady throughput / (workers x the 1-worker throughput); per added worker is the
steady throughput each worker added since the previous row brought, over the 1-worker one.
Last, the driver's own ceiling: a 1 ms model with room for 64 at once, 4 workers: what the
driver can record per second.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from api_cold import write_dataset  # bench/ is on sys.path when run
from vidbench.media.encode import write_mp4
from vidbench.runner.ray.cluster import worker_env
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.testing.standin_model import CAPACITY_ENV, LATENCY_ENV, StandIn


def _clip(folder: Path) -> Path:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    write_mp4(folder / "clip.mp4", [np.zeros((32, 32, 3), np.uint8) for _ in range(8)])
    return folder


def steady_rate(out: Path, latency: float) -> float:
    """Answers per second once the workers are up: from the start of the first answered request
    (its answer's time minus one latency) to the last answer."""
    with sqlite3.connect(out / "store.sqlite") as db:
        row = db.execute("SELECT COUNT(*), MIN(created), MAX(created) FROM responses").fetchone()
    n, first, last = row
    return n / (last - first + latency) if n else float("nan")


def stand_in_run(data: Path, out: Path, workers: int, concurrency: int) -> RunConfig:
    """MMWorld questions over `data` answered by the stand-in model on `workers` Ray workers."""
    return RunConfig(
        task="mmworld",
        data=str(data),
        model=StandIn.spec,
        out=str(out),
        concurrency=concurrency,
        progress=False,
        ray="auto",
        ray_workers=workers,
    )


def measure(
    data: Path, out: Path, workers: int, concurrency: int, latency: float
) -> tuple[float, float, int]:
    config = stand_in_run(data, out, workers, concurrency)
    started = time.perf_counter()
    stats = Run(config).infer()
    wall = time.perf_counter() - started
    return wall, steady_rate(out, latency), stats.answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--capacity", type=int, default=8, help="requests at once per worker")
    parser.add_argument("--concurrency", type=int, default=16, help="requests queued per worker")
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()

    import ray

    workdir = Path(tempfile.mkdtemp(prefix="vidbench-bench-ray-"))
    data = workdir / "data"
    write_dataset(_clip(workdir / "clips"), data, args.requests)
    counts = [int(n) for n in args.workers.split(",")]
    try:
        os.environ[LATENCY_ENV], os.environ[CAPACITY_ENV] = str(args.latency), str(args.capacity)
        ray.init(
            num_cpus=max(counts) + 1,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env=worker_env(),
        )
        ideal_one = args.capacity / args.latency
        print(
            f"{args.requests} requests, {args.latency} s each, {args.capacity} at once per worker "
            f"(ideal {ideal_one:.1f} req/s per worker), {os.cpu_count()} CPUs"
        )
        print(
            "| workers | wall s | req/s (wall) | req/s (steady) | ideal | vs ideal | efficiency "
            "| per added worker |"
        )
        print("|---|---|---|---|---|---|---|---|")
        base = previous = None
        for n in counts:
            wall, steady, answered = measure(
                data, workdir / f"w{n}", n, args.concurrency, args.latency
            )
            assert answered == args.requests, answered
            base = base or steady
            ideal = n * ideal_one
            added = (
                "-"
                if previous is None
                else f"{(steady - previous[1]) / ((n - previous[0]) * base):.2f}"
            )
            previous = (n, steady)
            print(
                f"| {n} | {wall:.2f} | {answered / wall:.1f} | {steady:.1f} | {ideal:.0f} | "
                f"{steady / ideal:.2f} | {steady / (n * base):.2f} | {added} |"
            )
        ray.shutdown()
        os.environ[LATENCY_ENV], os.environ[CAPACITY_ENV] = "0.001", "64"
        ray.init(num_cpus=5, include_dashboard=False, log_to_driver=False, runtime_env=worker_env())
        n = 2000
        write_dataset(workdir / "clips", workdir / "data2", n)
        wall, steady, answered = measure(workdir / "data2", workdir / "ceiling", 4, 64, 0.001)
        print(
            f"driver ceiling: {n} requests of 1 ms on 4 workers: {answered / wall:.0f} req/s "
            f"wall, {steady:.0f} req/s steady"
        )
    finally:
        ray.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
