"""A `vidbench run --ray` driver killed with `kill -9`, --tries (5) times: what its workers do
after the death, how long the cluster's processes outlive it, and what the rerun sends again;
and, for reference, a local run (no Ray) killed the same way as often.

Each try runs `vidbench run 4dbench-qa [--ray]` (a local cluster, its own process) against the
fake chat server (in this process, --latency 0.3 s a reply), kills the driver at a random moment
within one reply's time after --kill-at (12) answers were served, then watches: the requests
that reach the server after the death and when the last one came, the seconds until no process
of that run is left (found by a mark in their environment, so another Ray on the machine is not
counted) and, after the same command is run again (locally), how many prompts it sent again
that the server had already answered: an answer on its way at the kill (sent by the server,
not yet read by the client) is lost to a local run as well, which is why the local runs are the
reference.

    PYTHONPATH=src python bench/ray_driver_kill.py [--tries 5] [--questions 60] [--concurrency 4]

Run it with an older checkout's `src` first on PYTHONPATH to compare before and after a change.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from vidbench.benchmarks.fourd.synthetic.release import write_release
from vidbench.testing import ChatServer

MARK_ENV = "VIDBENCH_BENCH_MARK"


@dataclass
class Try:
    in_flight: int  # received by the server, not answered, when the driver died
    after_death: int  # requests that reached the server after the death
    calling_s: float  # from the death to the last request that reached the server (0: none)
    outlived_s: float  # until no process of the cluster was left
    resent: int  # prompts the rerun sent that had been answered before


def marked(mark: str) -> list[int]:
    wanted = f"{MARK_ENV}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and wanted in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def command_lines(pids: list[int]) -> list[str]:
    names = []
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            names.append(cmdline.split(b"\0")[0][:60].decode(errors="replace"))
        except OSError:  # ended meanwhile
            continue
    return names


def command(data: Path, out: Path, server: ChatServer, concurrency: int) -> list[str]:
    return [
        sys.executable, "-m", "vidbench.cli", "--no-progress", "run", "4dbench-qa",
        "--data", str(data), "--model", f"openai-compat:{server.base_url}#fake",
        "--out", str(out), "--cache-dir", str(out.parent / "cache"),
        "--concurrency", str(concurrency), "--model-opt", "backoff=0.01",
    ]  # fmt: skip


def one_try(data: Path, out: Path, server: ChatServer, args: argparse.Namespace, ray: bool) -> Try:
    server.reset(latency=args.latency)
    mark = secrets.token_hex(8)
    env = {**os.environ, MARK_ENV: mark}
    argv = command(data, out, server, args.concurrency)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    driver = subprocess.Popen([*argv, "--ray"] if ray else argv, env=env, **quiet)
    deadline = time.monotonic() + 300
    while server.stats().served < args.kill_at:
        if driver.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the run ended (or never started) before the kill: raise --questions")
        time.sleep(0.005)
    time.sleep(random.uniform(0, args.latency))
    driver.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    at_death = server.stats()
    driver.wait()
    outlived, told = None, False
    seen, last_call = at_death.received, killed
    while time.monotonic() - killed < args.watch:
        if (received := server.stats().received) > seen:
            seen, last_call = received, time.monotonic()
        left = marked(mark)
        if outlived is None and not left:
            outlived = time.monotonic() - killed
        if outlived is not None and time.monotonic() - killed > 5:
            break
        if left and not told and time.monotonic() - killed > 10:  # what outlives the run
            told = True
            print(f"{out.name}: still there 10 s after the kill: {command_lines(left)}")
        time.sleep(0.05)
    while server.stats().in_flight:  # the last orphaned requests finish
        time.sleep(0.05)
    after = server.stats()
    subprocess.run(argv, env=env, **quiet, check=False)
    return Try(
        in_flight=at_death.received - at_death.served,
        after_death=after.received - at_death.received,
        calling_s=last_call - killed,
        outlived_s=outlived if outlived is not None else float("inf"),
        resent=server.stats().resent_after_answer - after.resent_after_answer,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per reply")
    parser.add_argument("--kill-at", type=int, default=12, help="answers served at the kill")
    parser.add_argument("--watch", type=float, default=120, help="seconds to watch the cluster")
    parser.add_argument("--seed", type=int, default=0, help="of the kill moments")
    args = parser.parse_args()
    random.seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="vidbench-bench-driver-kill-") as tmp:
        data = write_release(Path(tmp) / "data", questions=args.questions, objects=4)
        with ChatServer() as server:
            runs = {
                kind: [
                    one_try(data, Path(tmp) / f"{kind}{i}", server, args, kind == "ray")
                    for i in range(args.tries)
                ]
                for kind in ("ray", "local")
            }
    print(
        f"{args.tries} driver kills of each kind after {args.kill_at} answers ({args.questions} "
        f"questions, --concurrency {args.concurrency}, {args.latency} s a reply, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )
    print("| run killed | in flight at the kill | requests after the kill | last one after s | "
          "gone after s | answered prompts the rerun sent again |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for kind, tries in runs.items():
        for n, t in enumerate(tries, 1):
            print(f"| {kind} #{n} | {t.in_flight} | {t.after_death} | {t.calling_s:.2f} | "
                  f"{t.outlived_s:.1f} | {t.resent} |")  # fmt: skip
    for kind, tries in runs.items():
        total = {
            f: sum(getattr(t, f) for t in tries) for f in ("in_flight", "after_death", "resent")
        }
        worst = max(t.outlived_s for t in tries)
        calling = max(t.calling_s for t in tries)
        print(f"| {kind}, all {len(tries)} | {total['in_flight']} | {total['after_death']} | "
              f"at most {calling:.2f} | at most {worst:.1f} | {total['resent']} |")  # fmt: skip


if __name__ == "__main__":
    main()
