"""The audit page in Chromium: `vidbench view` of the audited runs links it, the link opens it
from the report folder, and the flag filter (radio buttons and CSS, no script) shows only the
items of the kind chosen."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from audit_support import make_runs
from custom_support import vidbench
from view_support import open_report


@pytest.mark.slow
def test_the_view_links_the_audit_and_its_filter_works(
    tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    with ThreadPoolExecutor(1) as pool:  # Playwright's event loop holds this thread
        _, runs = pool.submit(make_runs, tmp_path).result()
    assert vidbench("audit", *runs, "--out", tmp_path / "audit", "--no-duplicates") == 0
    document = json.loads((tmp_path / "audit" / "audit.json").read_text())
    report = tmp_path / "report"
    assert vidbench("view", *runs, "--out", report, "--no-thumbnails", "--videos", "none") == 0
    page = open_report(open_page, report)
    link = page.locator("li.audit-link a")
    assert link.inner_text() == "Audit"
    assert "of 9 run(s)" in page.locator("li.audit-link").inner_text()
    link.click()
    page.wait_for_url("**/audits/audit-0.html")
    assert page.locator("h1").inner_text().startswith("Audit: custom:")
    flagged = [item["id"] for item in document["items"] if item["flags"]]

    def shown() -> list[str]:
        rows = page.locator(".filters tbody tr")
        return [
            rows.nth(i).locator("td").first.inner_text()
            for i in range(rows.count())
            if rows.nth(i).is_visible()
        ]

    assert shown() == flagged
    page.locator("label[for=k-gold]").click()
    gold = [i["id"] for i in document["items"] if any(f["kind"] == "gold" for f in i["flags"])]
    assert shown() == gold and {"q03", "q07"} <= set(gold)
    page.locator("label[for=k-blind]").click()
    assert shown() == ["q20", "q21"]
    page.locator("label[for=k-all]").click()
    assert shown() == flagged
