"""Saves from one tab never cross: a submit and a later autosave that wait behind a slow save go
out one after another, each with the version the previous one returned, so the tab does not
conflict with itself; and a blur after a save writes no new version."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Route, expect

from annotate_support import ADAPTERS, make_project, query, sign_in_page, writers
from browser import Web
from vidbench.annotate.web.app import create_app

pytestmark = pytest.mark.slow
UID0 = "0" * 32


def test_saves_queued_behind_a_slow_save_do_not_conflict(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    project = make_project(qa_release, tmp_path)
    work_id, name = writers(project, UID0)[0]
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, name)
    page.goto(f"{base}/work/{work_id}")

    held: list[Route] = []  # the first save is held at the network until the others queue
    page.route("**/api/work/*", lambda route: held.append(route))
    page.fill("#caption", "A cube.")
    while not held:  # the debounced autosave fires
        page.wait_for_timeout(50)
    page.click("[data-submit]")  # blurs the textarea (a change event) and submits
    page.fill("#caption", "A cube that spins.")
    page.wait_for_timeout(900)  # the debounce of the last change fires while the first is held
    assert len(held) == 1  # nothing went out beside the held save
    page.unroute("**/api/work/*")
    held[0].continue_()

    # the submit went out after the held save, with its version and the latest text (no
    # conflict with itself), then the page moved on to the next caption
    expect(page).not_to_have_url(f"{base}/work/{work_id}")
    rows = query(project, "SELECT content, version, status FROM work WHERE id = ?", (work_id,))
    assert tuple(rows[0]) == ("A cube that spins.", 2, "submitted")
    assert query(project, "SELECT COUNT(*) FROM conflicts")[0][0] == 0

    page.goto(f"{base}/work/{work_id}")
    expect(page.locator("[data-version]")).to_have_text("2")
    page.locator("#caption").focus()
    page.locator("[data-submit]").focus()  # a blur with nothing new: no save
    page.wait_for_timeout(900)
    assert query(project, "SELECT version FROM work WHERE id = ?", (work_id,))[0][0] == 2


def test_a_save_the_server_refuses_for_its_text_is_not_retried(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    """A caption holding half of a character (a lone surrogate, which a page can hold but no
    file can) is refused with 422 naming the field: the page says so and stops, where a server
    error would have it retry for ever."""
    web.watch.allow(r"status of 422")  # the console line of the refused save
    project = make_project(qa_release, tmp_path)
    work_id, name = writers(project, UID0)[1]
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, name)
    page.goto(f"{base}/work/{work_id}")
    saves: list[str] = []
    page.on("request", lambda r: saves.append(r.url) if r.method == "POST" else None)
    page.evaluate(  # typed or pasted: the textarea holds "A cube \ud800"
        "() => { const box = document.querySelector('#caption');"
        " box.value = 'A cube \\ud800'; box.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    saved = page.locator("[data-saved]")
    expect(saved).to_have_attribute("data-save-state", "refused", timeout=10_000)
    expect(saved).to_contain_text("not saved: content: character 8 is a lone surrogate")
    page.wait_for_timeout(2500)  # past the first retry delays (1 s, 2 s)
    assert len(saves) == 1
    assert query(project, "SELECT version FROM work WHERE id = ?", (work_id,))[0][0] == 0


def test_a_server_error_is_shown_not_retried_and_a_503_is_retried(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    """A 500 is the app's bug: the same save would fail again, so the page says the server
    failed and asks nothing more (it was retried every 15 s for ever); a 503 (a database it
    cannot use now) is retried, and saves when the server answers again."""
    web.watch.allow(r"status of 50[03]")  # the console lines of the failed saves
    project = make_project(qa_release, tmp_path)
    work_id, name = writers(project, UID0)[2]
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, name)
    page.goto(f"{base}/work/{work_id}")
    saves: list[str] = []
    page.on("request", lambda r: saves.append(r.url) if r.method == "POST" else None)

    def fail(status: int) -> None:
        body = '{"error": "internal error (IntegrityError): see the log"}'
        page.route(
            "**/api/work/*",
            lambda route: route.fulfill(status=status, body=body, content_type="application/json"),
        )

    fail(500)
    page.fill("#caption", "A cube.")
    saved = page.locator("[data-saved]")
    expect(saved).to_have_attribute("data-save-state", "failed", timeout=10_000)
    expect(saved).to_contain_text("not saved: the server failed (HTTP 500: internal error")
    page.wait_for_timeout(2500)  # past the first retry delays (1 s, 2 s)
    assert len(saves) == 1

    page.unroute("**/api/work/*")
    fail(503)
    page.fill("#caption", "A cube that spins.")
    expect(saved).to_have_attribute("data-save-state", "retrying", timeout=10_000)
    page.unroute("**/api/work/*")
    expect(saved).to_have_attribute("data-save-state", "saved", timeout=10_000)
    rows = query(project, "SELECT content FROM work WHERE id = ?", (work_id,))
    assert rows[0][0] == "A cube that spins."
