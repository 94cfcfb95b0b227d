"""The report's video players: made only for the samples in view and released when they leave
it, so quick page turns, filters and scrolling over many samples never run into Chromium's limit
on players (here lowered to 40 with --max-web-media-player-count, so 120 samples x 3 views show
what 2,100 samples do at the default limit); a sample out of view shows poster frames, and
playback works after all of it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser import CHROMIUM, CHROMIUM_ARGS
from conftest import make_qa_dataset
from vidbench.cli import main
from view_support import matching, open_report, run_model

pytestmark = pytest.mark.slow

PLAYER_LIMIT = 40  # Chromium's default is far higher; a report's many players reached it
LIVE_BOUND = 24  # the samples in view (and the margin around it) x 3 views, with room to spare
COUNT_VIDEOS = """() => {
  window.mostVideos = document.querySelectorAll('video').length;
  new MutationObserver(() => {
    window.mostVideos = Math.max(window.mostVideos, document.querySelectorAll('video').length);
  }).observe(document.body, { childList: true, subtree: true });
}"""
FIRST_PLAYS = """() => {
  const videos = [...document.querySelector('article.sample').querySelectorAll('video')];
  return videos.length === 3 && videos.every((v) => !v.paused && v.currentTime > 0);
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium with a low limit on media players (the module's own `browser`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        args = [*CHROMIUM_ARGS, f"--max-web-media-player-count={PLAYER_LIMIT}"]
        found = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield found
        found.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("players")
    data = make_qa_dataset(root / "data", n_objects=24)  # 120 samples: three pages
    run = run_model(data, "random", root / "random", root / "cache")
    out = root / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    return out


def _live(page: Any) -> int:
    return int(page.evaluate("document.querySelectorAll('video').length"))


def test_players_stay_few_through_quick_paging_and_filters(
    report: Path, open_page: Callable[..., Any]
) -> None:
    page = open_report(open_page, report)
    assert matching(page) == 120
    page.evaluate(COUNT_VIDEOS)
    # every sample of the page has its three views, as posters (their first thumbnail)
    assert page.locator("#samples .video-slot").count() == 150
    poster = page.locator("#samples .video-slot img.poster").first.get_attribute("src")
    assert poster is not None and poster.startswith("thumbs/")

    for _ in range(2):  # quickly, as a reader looking for something does
        for button in ("#next", "#next", "#prev", "#next", "#prev", "#prev"):
            page.click(button)
            page.mouse.wheel(0, 1500)
        for group in ("Action", "Appearance", ""):
            page.select_option("#f-group", group)
            page.mouse.wheel(0, 900)
        for outcome in ("wrong", "correct", ""):
            page.select_option("#f-outcome", outcome)
        for _ in range(8):
            page.mouse.wheel(0, 1200)
            page.wait_for_timeout(30)
        page.mouse.wheel(0, -20000)
    page.wait_for_timeout(300)
    most = int(page.evaluate("window.mostVideos"))
    assert 0 < most <= LIVE_BOUND, f"{most} players at once"
    assert _live(page) <= LIVE_BOUND

    # playback works after all that: the first sample's views play together
    first = page.locator("article.sample").first
    first.locator(".videos").scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('article.sample').querySelectorAll('video').length === 3"
    )
    first.locator("button", has_text="play views together").click()
    page.wait_for_function(FIRST_PLAYS, timeout=10000)
    assert page.locator(".video-error").count() == 0

    # scrolled out of view, its players are released (posters again)
    page.locator("article.sample").last.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('article.sample').querySelectorAll('video').length === 0"
    )
    assert first.locator("img.poster").count() == 3
