"""The audit queue in Chromium (issue 34, item 3): a reviewer opens an item the audit flagged,
sees the audit's reasons, the gold and the suggested option labelled, and decides by keyboard:
`f` fixes the gold to the suggestion, a digit to another option, `k` keeps, `d` drops with a
reason; each Enter submits and goes on to the next item. The screenshot of the queue page is
kept under test-artifacts/ (and docs/img/ with VIDBENCH_DOCS_SCREENSHOTS=1)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from annotate_support import ADAPTERS, PASSWORD, query, sign_in_page, work_ids
from audit_support import make_runs
from browser import ARTIFACTS, Watch
from custom_support import vidbench
from vidbench.annotate import assign, auth
from vidbench.annotate.audit_queue import import_audit
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app

pytestmark = pytest.mark.slow
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def _audited_project(root: Path) -> Project:
    """The faulty benchmark's runs audited, and a project on it with its queue given to rita."""
    bench, runs = make_runs(root)
    assert vidbench("audit", *runs, "--out", root / "audit", "--no-duplicates") == 0
    project = Project.init(root / "project", bench)
    conn = project.connect()
    try:
        auth.add_user(conn, "rita", "reviewer", PASSWORD)
        done = import_audit(conn, project.data, root / "audit" / "audit.json", ADAPTERS, "test")
        assert done.imported.added == 6 and done.imported.problems == []
        assign.assign(conn, "audit", None, "test")
    finally:
        conn.close()
    return project


def _at(page: Any, url: str) -> None:
    expect(page).to_have_url(url)
    expect(page.locator("body")).to_have_attribute("data-keys-ready", "yes")


def _decided(project: Project, work_id: int) -> tuple[str, str, dict[str, Any]]:
    """(item id, work status, decision) of one piece of work."""
    row = query(
        project,
        "SELECT i.data, w.status, w.content FROM work w JOIN items i ON i.id = w.item_id "
        "WHERE w.id = ?",
        (work_id,),
    )[0]
    return json.loads(row[0])["id"], row[1], json.loads(row[2] or "{}")


def test_a_reviewer_fixes_keeps_and_drops_flagged_items_by_keyboard(
    tmp_path: Path, open_page: Callable[..., Any], serve_app: Callable[..., str], watch: Watch
) -> None:
    watch.allow(r"status of 422")  # the drop without a reason, refused below
    with ThreadPoolExecutor(1) as pool:  # Playwright's event loop holds this thread
        project = pool.submit(_audited_project, tmp_path).result()
    base = serve_app(create_app(project, ADAPTERS))
    mine = work_ids(project, "rita", "audit")
    assert len(mine) == 6
    page = open_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in_page(page, base, "rita")
    expect(page.locator("body")).to_contain_text("audit queue")
    page.keyboard.press("Enter")  # my work: the first task not finished
    _at(page, f"{base}/work/{mine[0]}")

    # q03: the reasons, the gold and the suggestion, each labelled
    assert _decided(project, mine[0])[0] == "q03"
    expect(page.locator("[data-flag]")).to_contain_text("flagged by vidbench audit")
    reason = page.locator("[data-flag-reason]")
    expect(reason).to_contain_text("gold: the models strong on the rest favour B over the gold D")
    expect(reason).to_contain_text("chance: 0 of 7 models right")
    expect(page.locator("[data-flag-suggested]")).to_have_text("B")
    expect(page.locator("li[data-gold] .letter")).to_have_text("D")
    expect(page.locator("li[data-gold] .gold-badge")).to_have_text("gold answer")
    expect(page.locator("li[data-suggested] .letter")).to_have_text("B")
    expect(page.locator("li[data-suggested] .suggested-badge")).to_have_text(
        "suggested by the audit"
    )
    expect(page.locator("input[name=gold]:checked")).to_have_value("D")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "audit-queue.png"), full_page=True)
    if os.environ.get("VIDBENCH_DOCS_SCREENSHOTS"):
        page.screenshot(path=str(DOCS_IMG / "audit-queue.png"), full_page=True)

    # f: fix to the suggested option; Enter submits and opens the next item
    page.keyboard.press("f")
    expect(page.locator("input[name=gold]:checked")).to_have_value("B")
    expect(page.locator("input[name=decision][value=fix]")).to_be_checked()
    page.keyboard.press("Enter")
    _at(page, f"{base}/work/{mine[1]}")
    assert _decided(project, mine[0]) == (
        "q03",
        "submitted",
        {"decision": "fix", "reason": "", "gold": "B"},
    )

    # q07: a digit chooses that option as the gold (a fix); 4 is the gold D again: no fix
    page.keyboard.press("3")
    expect(page.locator("input[name=decision][value=fix]")).to_be_checked()
    page.keyboard.press("4")
    expect(page.locator("input[name=decision][value=fix]")).not_to_be_checked()
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    _at(page, f"{base}/work/{mine[2]}")
    assert _decided(project, mine[1])[1:] == (
        "submitted",
        {"decision": "fix", "reason": "", "gold": "B"},
    )

    # q12: kept
    page.keyboard.press("k")
    page.keyboard.press("Enter")
    _at(page, f"{base}/work/{mine[3]}")
    assert _decided(project, mine[2]) == ("q12", "submitted", {"decision": "keep", "reason": ""})

    # q13: d goes to the reason box; Enter there without a reason is refused, with one submits
    page.keyboard.press("d")
    expect(page.locator("input[name=reason]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("body")).to_contain_text("a drop needs a reason")
    assert _decided(project, mine[3])[1] != "submitted"
    page.keyboard.type("two options fit the clip")
    page.keyboard.press("Enter")
    _at(page, f"{base}/work/{mine[4]}")
    decided = _decided(project, mine[3])
    assert decided == (
        "q13",
        "submitted",
        {"decision": "drop", "reason": "two options fit the clip"},
    )

    # back to q03: the decision made is shown as it was saved
    page.goto(f"{base}/work/{mine[0]}")
    expect(page.locator("input[name=decision][value=fix]")).to_be_checked()
    expect(page.locator("input[name=gold]:checked")).to_have_value("B")
    expect(page.locator("li[data-gold] .letter")).to_have_text("D")  # the data's gold, until export
