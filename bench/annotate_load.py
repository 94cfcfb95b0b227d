"""The annotation app under load: --users annotators (20) each write a caption, saving it every
--interval seconds (3, with jitter) for --seconds (60), against the real server (`vidbench
annotate serve` in its own process, on 127.0.0.1), each signed in through the login form first
(the saving starts when all are signed in).

    python bench/annotate_load.py [--users 20] [--seconds 60] [--interval 3]

Prints the save latency (p50, p95, max, as the client sees it) and checks the database
afterwards: every acknowledged save is one revision (versions 1..n, none missing or twice), the
final text is the last one acknowledged, and no save failed or conflicted.
"""

from __future__ import annotations

import argparse
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from vidbench.annotate import assign, auth
from vidbench.annotate.adapters import registered_adapters
from vidbench.annotate.folder import import_folder
from vidbench.annotate.project import Project
from vidbench.benchmarks.fourd.synthetic import generate

PASSWORD = "load test password"
WRITERS_PER_OBJECT = 5


@dataclass
class Writer:
    name: str
    work_id: int = 0
    acknowledged: list[tuple[int, str]] = field(default_factory=list)  # (version, text)
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def make_project(root: Path, users: int) -> Project:
    objects = -(-users // WRITERS_PER_OBJECT)
    generate(root / "data", objects=objects, frames=12, size=32, workers=1)
    project = Project.init(root / "project", root / "data")
    conn = project.connect()
    import_folder(conn, project.data, "bench", registered_adapters())
    for i in range(users):
        auth.add_user(conn, f"writer{i:02d}", "annotator", PASSWORD)
    assign.assign(conn, "caption", WRITERS_PER_OBJECT, "bench")
    conn.close()
    return project


def start_server(project: Project) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "vidbench.cli", "annotate", "serve", str(project.path)]
    server = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            requests.get(f"{base}/login", timeout=1)
            return server, base
        except requests.ConnectionError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the server did not start")


def run_writer(
    writer: Writer, base: str, seconds: float, interval: float, seed: int, ready: threading.Barrier
) -> None:
    rng = random.Random(seed)
    with requests.Session() as client:
        page = client.get(f"{base}/login", timeout=30).text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        form = {"name": writer.name, "password": PASSWORD, "csrf": token}
        client.post(f"{base}/login", data=form, timeout=60)
        home = client.get(f"{base}/", timeout=30).text
        csrf = re.search(r'<meta name="csrf" content="([^"]+)"', home).group(1)
        version, n = 0, 0
        # saving starts once everyone is signed in: sign-ins (argon2, at most two at a time)
        # are bench/annotate_logins.py's subject, and would otherwise share the CPU with the
        # first saves
        ready.wait()
        time.sleep(rng.uniform(0, interval))  # people do not start in step
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            n += 1
            text = f"{writer.name}: draft {n} of a caption about a spinning object"
            started = time.perf_counter()
            reply = client.post(
                f"{base}/api/work/{writer.work_id}",
                json={"version": version, "content": text},
                headers={"X-CSRF-Token": csrf},
                timeout=30,
            )
            writer.latencies.append(time.perf_counter() - started)
            if reply.status_code != 200:
                writer.failures.append(f"save {n}: {reply.status_code} {reply.text[:80]}")
                continue
            version = reply.json()["version"]
            writer.acknowledged.append((version, text))
            time.sleep(max(0.0, interval * rng.uniform(0.7, 1.3)))


def check(project: Project, writers: list[Writer]) -> list[str]:
    """What the database lost or has twice, compared with what the server acknowledged."""
    problems = []
    conn = sqlite3.connect(project.database)
    for w in writers:
        content, version = conn.execute(
            "SELECT content, version FROM work WHERE id = ?", (w.work_id,)
        ).fetchone()
        revisions = conn.execute(
            "SELECT version, content FROM revisions WHERE work_id = ? ORDER BY version",
            (w.work_id,),
        ).fetchall()
        if [tuple(r) for r in revisions] != w.acknowledged:
            problems.append(f"{w.name}: revisions differ from the acknowledged saves")
        if w.acknowledged and (version, content) != w.acknowledged[-1]:
            problems.append(f"{w.name}: the final text is not the last acknowledged")
    conn.close()
    return problems


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--interval", type=float, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp), args.users)
        conn = project.connect()
        owners = dict(
            conn.execute(
                "SELECT u.name, MIN(w.id) FROM work w JOIN users u ON u.id = w.user_id "
                "WHERE w.job = 'write' GROUP BY u.name"
            ).fetchall()
        )
        conn.close()
        writers = [Writer(name, owners[name]) for name in sorted(owners)][: args.users]
        server, base = start_server(project)
        try:
            ready = threading.Barrier(len(writers))
            threads = [
                threading.Thread(
                    target=run_writer, args=(w, base, args.seconds, args.interval, i, ready)
                )
                for i, w in enumerate(writers)
            ]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(10)
        latencies = sorted(x for w in writers for x in w.latencies)
        failures = [f for w in writers for f in w.failures]
        problems = check(project, writers)
    saves = sum(len(w.acknowledged) for w in writers)
    print(
        f"{len(writers)} annotators, {wall:.1f} s, {saves} saves acknowledged, "
        f"{len(failures)} failed or conflicted"
    )
    print(
        f"save latency: p50 {1000 * percentile(latencies, 50):.1f} ms, "
        f"p95 {1000 * percentile(latencies, 95):.1f} ms, max {1000 * latencies[-1]:.1f} ms"
    )
    print(f"lost or duplicated writes: {len(problems)}")
    for line in failures[:10] + problems[:10]:
        print("  " + line)
    if failures or problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
