"""Helpers of the `vidbench view` tests: small 4D-Bench QA runs on data the tests write, each
with its own frame cache, and opening a report in Chromium from file://."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from vidbench.cli import main

READY = "() => document.body.dataset.ready === 'true'"


def vidbench_in_thread(*args: str | Path) -> int:
    """`vidbench ARGS` in a thread of its own: a test's open browser keeps Playwright's event
    loop running in the main thread, where a run's asyncio.run() would refuse to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(main, ["--no-progress", *map(str, args)]).result()


def run_model(data: Path, model: str, out: Path, cache: Path, *extra: str) -> Path:
    args = ["run", "4dbench-qa", "--data", data, "--model", model, "--out", out]
    assert vidbench_in_thread(*args, "--cache-dir", cache, *extra) == 0
    return out


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def open_report(open_page: Callable[..., Any], report: Path) -> Any:
    """The report's index.html from file://, once its data are loaded."""
    page = open_page()
    page.goto((report / "index.html").resolve().as_uri())
    page.wait_for_function(READY, timeout=15000)
    return page


def matching(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.matching"))


def set_filter(page: Any, selector: str, value: str) -> None:
    page.select_option(selector, value)
    page.wait_for_timeout(50)
