"""`vidbench view` on a large run: a synthetic 4D-Bench-shaped run of --samples (10,000)
answers (five subtasks, outputs of 20..400 characters, 3% unparsed, 2% failed, the exact prompt
of each answer in the store), --runs (1) of them side by side.

    python bench/report.py [--samples 10000] [--runs 1] [--keep DIR] [--objects 20]
        [--thumbnail-runs 2] [--thumbnail-data DIR] [--skip-browser]

Prints the time `vidbench view` takes to write the report (in a process of its own, so its
peak memory is its own: startup included), the report's size, and in Debian's Chromium (from
file://): the time until the page is interactive (its index loaded, the first page drawn), and
the time a filter, a first search (which loads the search text), a second search and a page
turn take. The synthetic runs have no data folder, so no frame
thumbnails or videos are made for them; their cost is measured apart on a procedural 4D-Bench
dataset of --objects objects (`vidbench synth 4d`, 128 px videos; or --thumbnail-data):
--thumbnail-runs random runs, then their report without thumbnails, with them from a cold frame
cache (every frame decoded), a warm one, and built again into the same folder. The issue's case,
2,100 samples x 2 runs: --objects 420 (five questions an object).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vidbench.core.files import write_json
from vidbench.core.requests import Response, Usage
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.runner.store import Store
from vidbench.scoring.outcome import SampleScore, graded

SUBTASKS = ["Object Counting", "Temporal Relationship", "Action", "Spatial Relationship",
            "Appearance"]  # fmt: skip
WORDS = [
    "the",
    "object",
    "rotates",
    "slowly",
    "while",
    "its",
    "left",
    "arm",
    "moves",
    "up",
    "and",
    "then",
    "down",
    "again",
]
CHROMIUM = "/usr/bin/chromium"


def _subtask_id(i: int) -> str:
    return SUBTASKS[i % 5].lower().replace(" ", "_")


def synthetic_run(out: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    store = Store(out)
    rows: list[SampleRow] = []
    for i in range(n):
        sample_id = f"{i // 5:032x}_{_subtask_id(i)}"
        gold = "ABCD"[rng.randrange(4)]
        roll = rng.random()
        if roll < 0.02:
            rows.append(SampleRow.unanswered(sample_id, "error", "HTTP 500 after retries"))
            continue
        parsed = None if roll < 0.05 else "ABCD"[rng.randrange(4)]
        text = " ".join(rng.choices(WORDS, k=rng.randrange(4, 70)))
        output = f"({parsed}) {text}" if parsed else text
        prompt = f"Question {i} about the object? {' '.join(rng.choices(WORDS, k=120))}"
        prompt_hash = f"h{i}"
        request = {"frames": [], "prompt": [prompt]}
        response = Response(key=f"k{i}", text=output, usage=Usage(900, 20))
        store.put_response("plan", sample_id, 1, prompt_hash, request, response)
        score = SampleScore(outcome=graded(parsed == gold, unparsed=parsed is None),
                            parsed=parsed, gold=gold, unparsed=parsed is None,
                            groups={"subtask": SUBTASKS[i % 5]})  # fmt: skip
        answer = {"id": sample_id, "prompt_hash": prompt_hash, "frames": [], "raw_output": output}
        rows.append(SampleRow.scored(answer, score))  # type: ignore[arg-type]
    store.close()
    ResultsDir(out).write_scored(rows, {"requests": n})
    scored = [r for r in rows if not r.failed]
    columns = {}
    for name in [*SUBTASKS, "Overall"]:
        values = [bool(r.correct) for r in scored if name in (r.groups["subtask"], "Overall")]
        columns[name] = 100 * sum(values) / len(values)
    write_json(out / "results.json", {
        "task": "4dbench-qa", "model": f"synthetic-{seed}", "n": n, "n_scored": len(scored),
        "errors": n - len(scored), "unparsed": sum(1 for r in scored if r.unparsed),
        "columns": columns, "ci95": {c: [v - 1.5, v + 1.5] for c, v in columns.items()},
        "column_n": {c: len(scored) // (1 if c == "Overall" else 5) for c in columns},
    })  # fmt: skip
    return out


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


# in the page: when the last input or click came, and when the sample list was last redrawn
MARKS = """() => {
  window.marks = { asked: 0, drawn: 0 };
  for (const kind of ["input", "click"]) {
    document.addEventListener(kind, () => { marks.asked = performance.now(); }, true);
  }
  new MutationObserver(() => { marks.drawn = performance.now(); })
    .observe(document.getElementById("samples"), { childList: true });
}"""


def open_report(page: Any, report: Path) -> dict[str, float]:
    """Open a report in a Playwright page: seconds until its first page is interactive, as
    Playwright sees it (`wall_s`) and in the page (`ready_s`)."""
    start = time.perf_counter()
    page.goto((report / "index.html").resolve().as_uri())
    page.wait_for_function("() => document.body.dataset.ready === 'true'", timeout=60000)
    times = {"wall_s": time.perf_counter() - start}
    times["ready_s"] = float(page.evaluate("document.body.dataset.readyMs")) / 1000
    return times


def first_page_s(report: Path) -> float:
    """Seconds until a report's first page is interactive in Chromium (from file://, a fresh
    browser: what opening the report costs a reader)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        wall_s = open_report(browser.new_page(), report)["wall_s"]
        browser.close()
    return wall_s


def browser_times(report: Path, last_id: str) -> dict[str, float]:
    """Seconds until the report is interactive, and of a filter, a first search, a second one,
    a search for the last sample (in the last chunk) and a page turn: each as Playwright sees
    it (its own overhead included) and, `_page` figures, in the page (from the input or click
    to the sample list drawn)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        times = open_report(page, report)
        total = page.evaluate("document.body.dataset.matching")
        page.evaluate(MARKS)
        changed = f"() => document.body.dataset.matching !== '{total}'"

        def timed(name: str, action, condition: str = changed) -> None:  # type: ignore[no-untyped-def]
            began = time.perf_counter()
            action()
            page.wait_for_function(condition, timeout=60000)
            times[f"{name}_s"] = time.perf_counter() - began
            times[f"{name}_page_s"] = page.evaluate("(marks.drawn - marks.asked) / 1000")

        def reset(selector: str) -> None:
            page.fill(selector, "") if selector == "#f-search" else page.select_option(selector, "")
            page.wait_for_function(f"() => document.body.dataset.matching === '{total}'")

        timed("filter", lambda: page.select_option("#f-outcome", "wrong"))
        reset("#f-outcome")
        timed("search", lambda: page.fill("#f-search", "arm moves up and then down"))
        reset("#f-search")
        timed("search_again", lambda: page.fill("#f-search", "left arm rotates"))
        reset("#f-search")
        timed("search_last", lambda: page.fill("#f-search", last_id))
        reset("#f-search")
        second_page = "() => document.getElementById('count').textContent.startsWith('51')"
        timed("page_turn", lambda: page.click("#next"), second_page)
        browser.close()
    return times


def view_in_process(runs: list[Path], report: Path) -> tuple[float, float, float]:
    """`vidbench view RUNS --out REPORT` in a Python process of its own: wall seconds, CPU
    seconds (user and system: what a busy machine changes least) and peak resident memory (MB)
    of that process."""
    command = "import sys; from vidbench.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["--no-progress", "view", *map(str, runs), "--out", str(report), "--no-thumbnails"]
    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", command, *args], stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - began
    assert os.waitstatus_to_exitcode(status) == 0, "vidbench view failed"
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # KiB on Linux


def _timed_view(runs: list[Path], report: Path, *extra: str) -> tuple[float, str]:
    """Seconds `vidbench view RUNS --out REPORT` takes, and what it printed last."""
    import contextlib
    import io

    from vidbench.cli import main as vidbench

    said = io.StringIO()
    began = time.perf_counter()
    args = ["--no-progress", "view", *map(str, runs), "--out", str(report), *extra]
    with contextlib.redirect_stderr(said):
        assert vidbench(args) == 0
    return time.perf_counter() - began, said.getvalue().strip().splitlines()[-1]


def thumbnail_times(root: Path, objects: int, runs: int, data: Path | None) -> None:
    """`vidbench view` of `runs` random runs over a procedural dataset of `objects` objects
    (five questions each): without thumbnails, with them from a cold frame cache (every frame
    decoded), a warm one, and built again into the same folder (the strips kept there)."""
    from vidbench.benchmarks.fourd.synthetic import generate
    from vidbench.cli import main as vidbench

    data = data or generate(root / "synth", objects=objects, workers=2)
    cache = root / "synth-cache"
    folders = []
    for k in range(runs):
        run = root / f"synth-run-{k}"
        args = ["run", "4dbench-qa", "--data", str(data), "--model", "random", "--seed", str(k)]
        assert vidbench(["--no-progress", *args, "--out", str(run), "--cache-dir", str(cache)]) == 0
        folders.append(run)
    shutil.rmtree(cache, ignore_errors=True)  # the first report with thumbnails decodes
    n = sum(len((run / "samples.jsonl").read_text().splitlines()) for run in folders)
    cases = [
        ("no thumbnails", "synth-report-none", ("--no-thumbnails",)),
        ("thumbnails, cold frame cache", "synth-report-cold", ()),
        ("thumbnails, warm frame cache", "synth-report-warm", ()),
        ("thumbnails, built again into the same folder", "synth-report-warm", ()),
    ]
    for name, folder, extra in cases:
        took, said = _timed_view(folders, root / folder, *extra)
        print(f"view of {runs} run(s) x {n // runs} samples, {name}: {took:.2f} s ({said})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--keep",
        help="write the runs and the report here (default: a temp "
        "dir); runs already there, of the same --samples, are reused",
    )
    parser.add_argument("--objects", type=int, default=20, help="objects of the thumbnail run")
    parser.add_argument("--thumbnail-runs", type=int, default=2, help="runs in that report")
    parser.add_argument("--thumbnail-data", help="a `synth 4d` dataset to use for it")
    parser.add_argument("--skip-browser", action="store_true", help="only the thumbnail part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep or tmp)
        if args.skip_browser:
            data = Path(args.thumbnail_data) if args.thumbnail_data else None
            thumbnail_times(root, args.objects, args.thumbnail_runs, data)
            return
        began = time.perf_counter()
        runs = [root / f"run-{k}" for k in range(args.runs)]
        for k, run in enumerate(runs):
            if not (run / "results.json").is_file():  # --keep: a run made before is reused
                synthetic_run(run, args.samples, k)
        print(f"synthetic runs: {args.runs} x {args.samples} samples "
              f"({time.perf_counter() - began:.1f} s to make)")  # fmt: skip
        shutil.rmtree(root / "report", ignore_errors=True)
        write_s, cpu_s, peak_mb = view_in_process(runs, root / "report")
        data = root / "report" / "data"
        print(f"vidbench view: {write_s:.2f} s ({cpu_s:.2f} s CPU), peak memory {peak_mb:.0f} MB "
              f"({args.runs} x {args.samples} samples)")  # fmt: skip
        files = len(list(data.iterdir()))
        print(f"report size: {size_of(root / 'report') / 1e6:.1f} MB "
              f"(data: {size_of(data) / 1e6:.1f} MB in {files} files)")  # fmt: skip
        last = args.samples - 1
        times = browser_times(root / "report", f"{last // 5:032x}_{_subtask_id(last)}")
        print(json.dumps({k: round(v, 3) for k, v in times.items()}))
        print(f"interactive in Chromium: {times['ready_s']:.2f} s after navigation "
              "(target < 2 s); in the page (Playwright's view): "
              + ", ".join(f"{name.replace('_', ' ')} {times[f'{name}_page_s']:.2f} s "
                          f"({times[f'{name}_s']:.2f} s)"
                          for name in ("filter", "search", "search_again", "search_last",
                                       "page_turn"))
              + " (a search waits 150 ms for the typing to pause)")  # fmt: skip
        if args.objects:
            data = Path(args.thumbnail_data) if args.thumbnail_data else None
            thumbnail_times(root, args.objects, args.thumbnail_runs, data)


if __name__ == "__main__":
    main()
