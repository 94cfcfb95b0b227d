"""A report of more samples than one chunk, in Debian's Chromium from file://: the first page
is drawn from the first chunk alone, turning pages loads the chunks they show, a filter and a
search find samples that are in chunks not loaded yet, and a sample's prompt comes from its
prompt file when opened."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vidbench.core.requests import Response, Usage
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.runner.store import Store
from vidbench.scoring.outcome import SampleScore, graded
from vidbench.view.build import ViewOptions, write_report
from vidbench.view.collect import collect_runs
from view_support import READY, matching

pytestmark = pytest.mark.slow  # Chromium, as the other report tests

SAMPLES = 1_030
CHUNK = 100  # rows a chunk: 11 chunks
FAILED = 1_017  # the one sample without an answer, in the last chunk
SUBTASKS = ("Action", "Counting")


def _run(out: Path) -> Path:
    """A run of SAMPLES answers: correct for even numbers, wrong for odd ones, one failed; each
    with its own prompt in the store."""
    store = Store(out)
    rows = []
    for i in range(SAMPLES):
        sample_id = f"s{i:04d}"
        if i == FAILED:
            rows.append(SampleRow.unanswered(sample_id, "error", "HTTP 500 after retries"))
            continue
        output = f"(A) answer number {i}"
        request = {"frames": [], "prompt": [f"the prompt of {sample_id}"]}
        store.put_response("plan", sample_id, 1, f"h{i}", request,
                           Response(key=f"k{i}", text=output, usage=Usage(1, 1)))  # fmt: skip
        score = SampleScore(outcome=graded(i % 2 == 0), parsed="A", gold="A",
                            groups={"subtask": SUBTASKS[i % 2]})  # fmt: skip
        answer = {"id": sample_id, "prompt_hash": f"h{i}", "frames": [], "raw_output": output}
        rows.append(SampleRow.scored(answer, score))  # type: ignore[arg-type]
    store.close()
    ResultsDir(out).write_scored(rows, {"requests": SAMPLES}, basis=dict)
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages")
    runs = collect_runs([_run(root / "run")], with_samples=False)
    out = root / "report"
    built = write_report(runs, ViewOptions(out, chunk_size=CHUNK, groups=("subtask",)))
    assert built.samples == SAMPLES
    assert len(list((out / "data").glob("samples-*.js"))) == 11
    return out


def _open(open_page: Callable[..., Any], report: Path) -> tuple[Any, list[str]]:
    """The report from file://, once its first page is drawn; and the list of the data files
    it asks for, kept up to date."""
    page = open_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto((report / "index.html").resolve().as_uri())
    page.wait_for_function(READY, timeout=15000)
    return page, asked


def _data(asked: list[str]) -> list[str]:
    return sorted({url.rsplit("/", 1)[-1] for url in asked if "/data/" in url})


def _ids(page: Any) -> list[str]:
    return page.locator("article.sample").evaluate_all("(cards) => cards.map((c) => c.dataset.id)")


def _shown_page(page: Any, number: int) -> None:
    page.wait_for_function(f"() => document.body.dataset.page === '{number}'")


def test_pages_load_the_chunks_they_show(report: Path, open_page: Callable[..., Any]) -> None:
    page, asked = _open(open_page, report)
    assert matching(page) == SAMPLES
    assert _ids(page) == [f"s{i:04d}" for i in range(50)]
    assert _data(asked) == ["meta.js", "samples-000.js"]  # nothing else until asked for
    page.click("#next")
    _shown_page(page, 2)
    page.click("#next")
    _shown_page(page, 3)  # rows 100..149: the second chunk
    assert _ids(page) == [f"s{i:04d}" for i in range(100, 150)]
    assert "samples-001.js" in _data(asked) and "samples-002.js" not in _data(asked)
    assert "101–150 of 1030 matching (page 3 of 21" in page.inner_text("#count")
    page.click("#prev")
    _shown_page(page, 2)
    assert _ids(page)[0] == "s0050"

    # a filter finds the one failed sample, in the last chunk
    page.select_option("#f-outcome", "no-answer")
    page.wait_for_function("() => document.body.dataset.matching === '1'")
    assert _ids(page) == [f"s{FAILED:04d}"]
    assert "samples-010.js" in _data(asked)
    assert "HTTP 500 after retries" in page.inner_text("article.sample")
    page.select_option("#f-outcome", "wrong")
    page.select_option("#f-group", "Counting")  # the odd ones, all wrong
    page.wait_for_function(f"() => document.body.dataset.matching === '{SAMPLES // 2 - 1}'")
    assert _ids(page)[:3] == ["s0001", "s0003", "s0005"]
    page.select_option("#f-outcome", "")
    page.select_option("#f-group", "")
    page.wait_for_function(f"() => document.body.dataset.matching === '{SAMPLES}'")

    # a search loads the search text, and finds a sample in a chunk not loaded yet
    page.fill("#f-search", "answer number 777")
    page.wait_for_function("() => document.body.dataset.matching === '1'")
    assert _ids(page) == ["s0777"]
    assert "search-000.js" in _data(asked) and "samples-007.js" in _data(asked)
    page.fill("#f-search", "S0888")  # case does not matter
    page.wait_for_function("() => document.querySelector('article.sample').dataset.id === 's0888'")
    assert matching(page) == 1

    # the exact prompt, from its prompt file when opened
    card = page.locator("article.sample")
    assert not any(name.startswith("prompts-") for name in _data(asked))
    card.locator("summary", has_text="Prompt").click()
    card.locator("pre.prompt").wait_for()
    assert card.locator("pre.prompt").inner_text() == "the prompt of s0888"
    assert "prompts-001.js" in _data(asked)  # 500 prompts a file: the 888th is in the second
