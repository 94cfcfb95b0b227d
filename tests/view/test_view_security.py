"""Untrusted text in the report: a question, model outputs, judge prompts and replies, ids and
error messages holding markup and `javascript:` links are shown as text, in Chromium from
file://: no dialog, no console error, no request, no element made from them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import make_qa_dataset
from vidbench.cli import main
from vidbench.core.requests import Response, Usage
from vidbench.report.schema import SampleRow
from vidbench.runner.store import Store
from view_support import matching, open_report, records, run_model

pytestmark = pytest.mark.slow

PAYLOADS = [
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('img')>",
    '"><svg onload=alert("svg")>',
    "<a href=\"javascript:alert('link')\">click me</a>",
    "<img src=http://198.51.100.7/leak.png>",
]
EVIL = " ".join(PAYLOADS)


def _hostile_run(root: Path) -> Path:
    data = make_qa_dataset(root / "data", n_objects=1)
    qa_file = data / "4D_Object_Question_Answering" / "data" / "4d_qa.json"
    qa = json.loads(qa_file.read_text())
    first = next(iter(qa))
    qa[first]["Question"] = f"Which one? {EVIL}"
    qa_file.write_text(json.dumps(qa))
    answers = root / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": i, "answer": f"(B) {EVIL}"}) + "\n" for i in qa))
    run = run_model(data, f"predictions:{answers}", root / "run", root / "cache")
    store = Store(run)  # judge replies of every attempt, as a judged task stores them
    for attempt in range(2):
        reply = Response(key="k", text=f"verdict {attempt}: {EVIL}", usage=Usage(3, 4))
        store.put_call(f"j{attempt}", "fake-judge", f"{first}:judge", "v1", attempt,
                           f"judge prompt {EVIL}", reply)  # fmt: skip
    store.close()
    hostile = SampleRow.unanswered(f"id-{EVIL}", "media", f"cannot read {EVIL}")
    with (run / "samples.jsonl").open("a") as f:
        f.write(json.dumps(hostile.record()) + "\n")
    return run


def test_hostile_text_is_shown_as_text(tmp_path: Path, open_page: Callable[..., Any]) -> None:
    run = _hostile_run(tmp_path)
    report = tmp_path / "report"
    assert main(["view", str(run), "--out", str(report)]) == 0
    page = open_report(open_page, report)
    assert matching(page) == len(records(run)) == 6
    page.fill("#f-search", "Which one? <script>alert('script')</script>")
    page.wait_for_function("() => document.body.dataset.matching === '1'")  # the question
    card = page.locator("article.sample")
    card.locator("summary", has_text="attempt(s)").click()  # the judge's attempts
    card.locator("details .attempt summary").first.click()  # the first attempt's prompt
    judged = card.inner_text()
    assert judged.count("verdict 1: <script>") == 1 and "judge prompt <script>" in judged
    page.fill("#f-search", "")
    page.wait_for_function("() => document.body.dataset.matching === '6'")
    shown = page.locator("#samples").inner_text()
    for payload in PAYLOADS:
        assert shown.count(payload) >= 6  # the question, five outputs, the id and error
    assert f"id-{EVIL}" in shown and f"cannot read {EVIL}" in shown
    # nothing was made from the text: the page's own elements only
    made = page.evaluate(
        "[...document.querySelectorAll('#samples script, #samples svg, #samples a, "
        "#samples [onerror], #samples [onload]')].length"
    )
    assert made == 0
    sources = page.evaluate("[...document.querySelectorAll('img')].map(i => i.src)")
    report_url = (report / "index.html").resolve().as_uri().rsplit("/", 1)[0]
    assert sources and all(
        s.startswith((f"{report_url}/thumbs/", f"{report_url}/figures/")) for s in sources
    )
    # the open_page fixture fails the test on any dialog, console error or outside request


def test_answers_cut_at_the_token_limit_are_counted_and_marked(
    tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    answers = tmp_path / "answers.jsonl"
    qa = json.loads((data / "4D_Object_Question_Answering" / "data" / "4d_qa.json").read_text())
    answers.write_text("".join(json.dumps({"id": i, "answer": "(A)"}) + "\n" for i in qa))
    run = run_model(data, f"predictions:{answers}", tmp_path / "run", tmp_path / "cache")
    rows = records(run)
    for row in rows[:2]:  # two replies stopped at max_tokens, one with markup in it
        row.update(truncated=True, raw_output=f"(A) {EVIL}")
    (run / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = tmp_path / "report"
    assert main(["view", str(run), "--out", str(report)]) == 0
    page = open_report(open_page, report)
    summary = page.locator(".run-summary").inner_text()
    assert "2 answer(s) cut at the token limit (max_tokens)" in summary
    cards = page.locator("article.sample")
    marked = [cards.nth(k).locator(".truncated").count() for k in range(cards.count())]
    assert sorted(marked) == [0, 0, 0, 1, 1]
    shown = page.locator("#samples").inner_text()
    assert shown.count("cut at the token limit") == 2 and shown.count(PAYLOADS[0]) == 2
    made = page.evaluate("document.querySelectorAll('#samples script, #samples svg').length")
    assert made == 0
