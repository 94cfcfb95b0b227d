"""Recovery on Ray: how much a worker killed mid-run costs the infer stage.

A stand-in model (testing/standin_model.py) of fixed latency and capacity on 2 workers; the run
is timed once undisturbed and once with one worker killed (`kill -9`) when `--kill-at` of the
answers are stored. The dead worker's in-flight samples are sent again (docs/scale-out.md,
"Worker deaths"); the cost of a death is the killed run's wall time minus the undisturbed one.

    PYTHONPATH=src python bench/ray_recovery.py [--requests 320] [--latency 1.0] [--capacity 16]

Run it with an older checkout's `src` on PYTHONPATH to compare before and after a change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from api_cold import write_dataset  # bench/ is on sys.path when run
from ray_scale import _clip, stand_in_run
from vidbench.runner.ray.cluster import worker_env
from vidbench.runner.run import Run
from vidbench.testing.standin_model import CAPACITY_ENV, LATENCY_ENV


def worker_pids() -> list[int]:
    """Processes of live InferWorker actors (Ray titles them ray::InferWorker...)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(
                b"ray::InferWorker"
            ):
                pids.append(int(entry.name))
        except OSError:
            continue
    return sorted(pids)


def stored(out: Path) -> int:
    try:
        with sqlite3.connect(out / "store.sqlite", timeout=1) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def timed_run(data: Path, out: Path, concurrency: int, kill_after: int | None) -> float:
    """The infer stage's wall seconds; with `kill_after`, one worker is killed once that many
    answers are stored."""
    config = stand_in_run(data, out, workers=2, concurrency=concurrency)
    killed: list[float] = []

    def killer() -> None:
        assert kill_after is not None
        while stored(out) < kill_after:
            time.sleep(0.01)
        os.kill(worker_pids()[0], signal.SIGKILL)
        killed.append(time.perf_counter())

    if kill_after is not None:
        threading.Thread(target=killer, daemon=True).start()
    started = time.perf_counter()
    stats = Run(config).infer()
    wall = time.perf_counter() - started
    if kill_after is not None and not killed:
        raise SystemExit("the run ended before the kill: lower --kill-at")
    assert stats.answered == stats.planned and not stats.failed, stats
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=320)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--capacity", type=int, default=16, help="requests at once per worker")
    parser.add_argument("--concurrency", type=int, default=16, help="in flight per worker")
    parser.add_argument("--kill-at", type=float, default=0.3, help="fraction answered at the kill")
    parser.add_argument("--repeat", type=int, default=3, help="killed runs (the mean is shown)")
    args = parser.parse_args()

    import ray

    workdir = Path(tempfile.mkdtemp(prefix="vidbench-bench-recovery-"))
    data = workdir / "data"
    write_dataset(_clip(workdir / "clips"), data, args.requests)
    try:
        os.environ[LATENCY_ENV], os.environ[CAPACITY_ENV] = str(args.latency), str(args.capacity)
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, runtime_env=worker_env())
        ideal = args.requests * args.latency / (2 * min(args.capacity, args.concurrency))
        print(
            f"{args.requests} requests, {args.latency} s each, {args.capacity} at once per worker,"
            f" 2 workers (ideal {ideal:.1f} s), {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        calm = timed_run(data, workdir / "calm", args.concurrency, None)
        kill_after = int(args.kill_at * args.requests)
        walls = [
            timed_run(data, workdir / f"killed{i}", args.concurrency, kill_after)
            for i in range(args.repeat)
        ]
        mean = sum(walls) / len(walls)
        print("| run | wall s | cost of the death s |")
        print("|---|---|---|")
        print(f"| undisturbed | {calm:.1f} | - |")
        for i, wall in enumerate(walls):
            print(f"| one worker killed at {kill_after} answers (#{i + 1}) | {wall:.1f} | "
                  f"{wall - calm:.1f} |")  # fmt: skip
        print(f"| killed, mean of {len(walls)} | {mean:.1f} | {mean - calm:.1f} |")
    finally:
        ray.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
