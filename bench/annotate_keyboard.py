"""A reviewer with the keyboard alone: --items (100) QA items of the procedural 4D dataset,
each accepted with `a` then Enter (submitted, and on to the next item not finished), in
Debian's Chromium through Playwright, against the real server (`vidbench annotate serve --port
0` in its own process, on 127.0.0.1).

    python bench/annotate_keyboard.py [--items 100] [--size 128] [--frames 24]

Prints the keystrokes per item and the seconds per item: from the key that submits one item to
the next item's page ready for keys with its three official views able to play (the save, the
next page and its videos: what the app adds to the reviewer's own time), as mean, p50, p95 and
max; and checks the database afterwards: every item submitted, with the decision accept.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


from browser import CHROMIUM, CHROMIUM_ARGS  # Debian's chromium, its flags
from vidbench.annotate import assign, auth
from vidbench.annotate.adapters import registered_adapters
from vidbench.annotate.folder import import_folder
from vidbench.annotate.project import Project
from vidbench.benchmarks.fourd.synthetic import generate

PASSWORD = "keyboard bench password"
QUESTIONS_PER_OBJECT = 5  # the procedural dataset's subtasks


def make_project(root: Path, items: int, size: int, frames: int) -> Project:
    objects = -(-items // QUESTIONS_PER_OBJECT)
    generate(root / "data", objects=objects, frames=frames, size=size, workers=1)
    project = Project.init(root / "project", root / "data")
    conn = project.connect()
    import_folder(conn, project.data, "bench", registered_adapters())
    auth.add_user(conn, "rita", "reviewer", PASSWORD)
    assign.assign(conn, "qa", 1, "bench")
    conn.close()
    return project


def start_server(project: Project) -> tuple[subprocess.Popen[str], str]:
    """The server on a free port (--port 0): the address it prints once it listens."""
    command = [sys.executable, "-m", "vidbench.cli", "annotate", "serve", str(project.path)]
    server = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    found = re.search(r"http://[\d.]+:\d+", server.stdout.readline())
    if not found:
        server.kill()
        raise SystemExit("the server printed no address")
    return server, found.group(0)


def ready(page, views: int) -> None:  # type: ignore[no-untyped-def]
    """The page listens for keys and its first `views` videos can play."""
    page.wait_for_selector("body[data-keys-ready]")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('.main-views video')].slice(0, {views})"
        ".every(v => v.readyState >= 3)"
    )


def review(base: str, count: int) -> tuple[list[float], int]:
    """(seconds per item, keystrokes) for `count` items, accepted by keyboard alone."""
    from playwright.sync_api import sync_playwright

    seconds, keys = [], 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/login")  # signing in is typing a name and a password, not counted
        page.fill("input[name=name]", "rita")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        page.wait_for_selector("body[data-keys-ready]")
        page.keyboard.press("Enter")  # my work: Enter starts the first task not finished
        keys += 1
        page.wait_for_url(re.compile(r"/work/\d+$"))
        ready(page, 3)
        for n in range(count):
            at = page.url
            start = time.perf_counter()
            page.keyboard.press("a")
            page.keyboard.press("Enter")
            keys += 2
            page.wait_for_url(lambda url, at=at: url != at)
            if n < count - 1:
                ready(page, 3)
            else:
                page.wait_for_url(f"{base}/")  # none left: back to my work
            seconds.append(time.perf_counter() - start)
        browser.close()
    return seconds, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100, help="QA items to review (100)")
    parser.add_argument("--size", type=int, default=128, help="video side in pixels (128)")
    parser.add_argument("--frames", type=int, default=24, help="frames per view (24)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp), args.items, args.size, args.frames)
        conn = project.connect()
        count = conn.execute("SELECT COUNT(*) FROM work WHERE job = 'review'").fetchone()[0]
        conn.close()
        server, base = start_server(project)
        try:
            wall = time.perf_counter()
            seconds, keys = review(base, count)
            wall = time.perf_counter() - wall
        finally:
            server.terminate()
            server.wait(10)
        conn = project.connect()
        rows = conn.execute("SELECT status, content FROM work WHERE job = 'review'").fetchall()
        conn.close()
    accepted = sum(
        r["status"] == "submitted" and json.loads(r["content"])["decision"] == "accept"
        for r in rows
    )
    cut = statistics.quantiles(seconds, n=20, method="inclusive")
    print(f"{count} QA items, {args.size} px views of {args.frames} frames, keyboard alone")
    print(f"keystrokes: {keys} ({(keys - 1) / count:.1f} per item, and 1 to start)")
    print(
        f"seconds per item (submit -> next item ready with its 3 views): mean "
        f"{statistics.mean(seconds):.3f}, p50 {statistics.median(seconds):.3f}, "
        f"p95 {cut[18]:.3f}, max {max(seconds):.3f}"
    )
    print(f"all {count} items in {wall:.1f} s; accepted in the database: {accepted} of {count}")
    if accepted != count:
        raise SystemExit("not every item was submitted as accepted")


if __name__ == "__main__":
    main()
