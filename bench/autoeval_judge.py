"""How fast `vidbench judge autoeval-video` judges the 327 shared predictions against a judge with
real latency: the fake chat server (in its own process) answering every request after --latency
seconds, --capacity at once, and vidbench at --concurrency calls in flight.

    python bench/autoeval_judge.py [--latency 1] [--capacity 64] [--concurrency 64]

Prints the wall time of a cold run (every prompt sent) against the floor
ceil(327 / min(capacity, concurrency)) x latency, then of a second run into the same results
directory (every verdict read from the store: no request at all).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import tempfile
import time
import urllib.request
from pathlib import Path

from rich.console import Console

from api_throughput import start_server  # bench/ is on sys.path when run
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.benchmarks.autoeval_video.judge_predictions import JudgeJob, judge_predictions
from vidbench.benchmarks.autoeval_video.rules import get_protocol
from vidbench.models.registry import ModelChoice

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "autoeval-video"
REPLY = "The answer matches the rules.\n1"


def received(base_url: str) -> int:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_stats", timeout=5) as r:
                return int(json.loads(r.read())["received"])
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    quiet = Console(file=io.StringIO())
    n = sum(1 for line in (args.data / "AUTO-EVAL-VIDEO.json").open() if line.strip())
    floor = math.ceil(n / min(args.capacity, args.concurrency)) * args.latency
    server, base_url = start_server(args.latency, args.capacity, REPLY)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            judge = ModelChoice(f"openai-compat:{base_url}#judge", concurrency=args.concurrency)
            job = JudgeJob(
                args.data / "AUTO-EVAL-VIDEO.json",
                args.data / "prediction_sample.json",
                Path(tmp),
                judge,
                JudgePrompt.make("rules", get_protocol("official")),
                progress=False,
            )
            for label in ("cold", "warm (all stored)"):
                before = received(base_url)
                start = time.perf_counter()
                results = judge_predictions(job, quiet)
                wall = time.perf_counter() - start
                sent = received(base_url) - before
                print(
                    f"{label:>18}: {results['n_judged']} judged, {sent} requests, {wall:.2f} s"
                    + (f" (floor {floor:.2f} s, {wall / floor:.2f}x)" if sent else "")
                )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
