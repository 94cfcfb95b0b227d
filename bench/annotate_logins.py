"""Sign-ins against the real annotation server (`vidbench annotate serve` in its own process, on
127.0.0.1): --parallel (16) people signing in at the same moment; a burst of --burst (30) wrong
passwords for one account sent at once from one address, then another account signing in from
that address; then one client guessing one account's password --guesses (220) times at --rate
(8) a second, then trying the right one.

    python bench/annotate_logins.py [--parallel 16] [--burst 30] [--guesses 220] [--rate 8]

Prints the server's resident memory before and at its peak (VmHWM) around the parallel sign-ins
(each argon2 hash takes 64 MiB; the app runs at most two at once), their wall time and answers;
how many of the burst were hashed (answered "wrong", 303) and how many refused before hashing
(429), and what the other account got; how many guesses were hashed and how many refused, and
what the right password got at the end (and, if refused, once the lock's Retry-After has passed).
Run it with an older checkout's `src` first on PYTHONPATH to compare before and after a change.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests

from annotate_load import PASSWORD, make_project, start_server


def memory_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} in /proc/{pid}/status")


def login_form(session: requests.Session, base: str, name: str, password: str) -> dict[str, str]:
    page = session.get(f"{base}/login", timeout=30).text
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    return {"name": name, "password": password, "csrf": token}


def parallel_sign_ins(base: str, n: int) -> tuple[float, Counter[int]]:
    sessions = [requests.Session() for _ in range(n)]
    forms = [login_form(s, base, f"writer{i:02d}", PASSWORD) for i, s in enumerate(sessions)]
    start, answers = threading.Barrier(n), Counter()

    def sign_in(session: requests.Session, form: dict[str, str]) -> None:
        start.wait()
        reply = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=120)
        answers[reply.status_code] += 1

    threads = [
        threading.Thread(target=sign_in, args=pair) for pair in zip(sessions, forms, strict=True)
    ]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - began, answers


def burst(base: str, n: int) -> tuple[Counter[str], int]:
    """`n` wrong passwords for writer01 at the same moment, then writer02's right one, all from
    this address: (answers of the burst, writer02's status)."""
    sessions = [requests.Session() for _ in range(n)]
    forms = [login_form(s, base, "writer01", "not the password") for s in sessions]
    start, answers = threading.Barrier(n), Counter()

    def guess(session: requests.Session, form: dict[str, str]) -> None:
        start.wait()
        reply = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=120)
        answers["wrong (hashed)" if reply.status_code == 303 else str(reply.status_code)] += 1

    threads = [
        threading.Thread(target=guess, args=pair) for pair in zip(sessions, forms, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with requests.Session() as session:
        form = login_form(session, base, "writer02", PASSWORD)
        other = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=60)
    return answers, other.status_code


def guesses(base: str, n: int, rate: float) -> tuple[Counter[str], str]:
    answers: Counter[str] = Counter()
    with requests.Session() as session:
        for _ in range(n):
            began = time.perf_counter()
            form = login_form(session, base, "writer00", "not the password")
            reply = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=60)
            answers["wrong (hashed)" if reply.status_code == 303 else str(reply.status_code)] += 1
            time.sleep(max(0.0, 1 / rate - (time.perf_counter() - began)))
        right = []
        for _ in range(2):  # refused while the lock runs: once more after its Retry-After
            form = login_form(session, base, "writer00", PASSWORD)
            reply = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=60)
            wait = reply.headers.get("retry-after")
            right.append(f"{reply.status_code}" + (f" (Retry-After {wait} s)" if wait else ""))
            if reply.status_code != 429 or wait is None:
                break
            time.sleep(float(wait))
    return answers, ", then ".join(right)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--burst", type=int, default=30)
    parser.add_argument("--guesses", type=int, default=220)
    parser.add_argument("--rate", type=float, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp), args.parallel)
        server, base = start_server(project)
        try:
            requests.get(f"{base}/login", timeout=30)
            before = memory_mib(server.pid, "VmRSS")
            wall, answers = parallel_sign_ins(base, args.parallel)
            peak = memory_mib(server.pid, "VmHWM")
            burst_answers, other = burst(base, args.burst)
            guessed, right = guesses(base, args.guesses, args.rate)
        finally:
            server.terminate()
            server.wait(10)
    print(
        f"{args.parallel} parallel sign-ins: {wall:.1f} s, answers {dict(answers)}; server memory "
        f"{before:.0f} MiB before, {peak:.0f} MiB at its peak"
    )
    print(
        f"a burst of {args.burst} wrong passwords for one account at once: "
        f"{dict(burst_answers)}; then another account from the same address: {other}"
    )
    print(f"{args.guesses} wrong guesses at {args.rate:g}/s: {dict(guessed)}")
    print(f"then the right password: {right}")


if __name__ == "__main__":
    main()
