"""`vidbench view` of a judged run (AutoEval-Video's rules judged through a real HTTP judge):
every attempt's prompt and reply on its sample, the verdicts' outcomes, the dimension filter."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autoeval_support import judging, prompt_of
from vidbench.report.results_dir import ResultsDir
from vidbench.testing import ChatServer
from view_support import matching, open_report, records, set_filter, vidbench_in_thread

pytestmark = pytest.mark.slow


def _reply(body: dict[str, Any]) -> str:
    """Right for some answers, wrong for others, unreadable for one in ten (asked again, then
    `verdict-unparsed`)."""
    prompt = prompt_of(body)
    if len(prompt) % 10 == 0:
        return "<img src=x onerror=alert(1)> I cannot tell."
    return "<script>alert('judge')</script> The answer matches.\n" + str(len(prompt) % 2)


def test_judged_run_shows_every_attempt(tmp_path: Path, open_page: Callable[..., Any]) -> None:
    run = tmp_path / "judged"
    with ChatServer(reply=_reply) as server:
        assert vidbench_in_thread(*judging(server), "--out", run) == 0
        asked = len(server.requests)
    scored = records(run)
    expected = Counter(row.outcome.label for row in ResultsDir(run).read_samples())
    assert expected["correct"] and expected["wrong"] and expected["verdict-unparsed"]
    report = tmp_path / "report"
    args = ["view", run, "--out", report, "--videos", "none", "--no-thumbnails"]
    assert vidbench_in_thread(*args) == 0
    text = (report / "data" / "samples-000.js").read_text()
    rows = json.loads(text[text.index(",") + 1 : -3])
    assert not (report / "data" / "samples-001.js").exists()  # 327 rows: one chunk
    attempts = sum(len(e["judge_calls"]) for r in rows for e in r["runs"] if e)
    assert attempts == asked  # every reply the judge gave, on its sample
    assert not any(e["judge"] for r in rows for e in r["runs"] if e)  # none failed

    page = open_report(open_page, report)
    assert matching(page) == len(scored)
    for name, count in expected.items():
        set_filter(page, "#f-outcome", name)
        assert matching(page) == count, name
    set_filter(page, "#f-outcome", "verdict-unparsed")  # the judge's replies never read
    card = page.locator("article.sample").first
    card.locator("summary", has_text="attempt(s)").click()
    card.locator(".judge-reply").nth(1).wait_for()  # built on the toggle event, after the click
    shown = card.inner_text()
    assert shown.count("<img src=x onerror=alert(1)> I cannot tell.") >= 2  # each attempt
    card.locator("summary", has_text="Judging rule").click()
    assert "[Answer to be judged]" in card.locator("pre.rules").inner_text()  # the rule itself
    set_filter(page, "#f-outcome", "")
    dimension = scored[0]["groups"]["dimension"]
    set_filter(page, "#f-group", dimension)
    in_group = [r for r in scored if r.get("groups", {}).get("dimension") == dimension]
    assert matching(page) == len(in_group)
