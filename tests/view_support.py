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


def run_model(data: Path, model: str, out: Path, cache: Path, *extra: str) -> Path:
    """`vidbench run` in a thread of its own: a test's open browser keeps Playwright's event
    loop running in the main thread, where the run's asyncio.run() would refuse to start."""
    args = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", model]
    with ThreadPoolExecutor(1) as pool:
        code = pool.submit(main, [*args, "--out", str(out), "--cache-dir", str(cache), *extra])
        assert code.result() == 0
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
