"""A video the browser will not play says so beside its poster, instead of staying black: here
Chromium may make only 2 players (--max-web-media-player-count), and the first sample has 3."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser import CHROMIUM, CHROMIUM_ARGS
from conftest import make_qa_dataset
from vidbench.cli import main
from view_support import open_report, run_model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium that makes at most 2 media players (the module's own `browser`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        args = [*CHROMIUM_ARGS, "--max-web-media-player-count=2"]
        found = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield found
        found.close()


def test_a_player_that_cannot_be_made_is_named(
    tmp_path: Path, open_page: Callable[..., Any], watch: Any
) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    run = run_model(data, "random", tmp_path / "random", tmp_path / "cache")
    assert main(["view", str(run), "--out", str(tmp_path / "report")]) == 0
    watch.allow("too many WebMediaPlayers")  # Chromium's own console line: expected here
    page = open_report(open_page, tmp_path / "report")
    first = page.locator("article.sample").first
    first.locator(".videos").scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('article.sample .video-error') !== null", timeout=10000
    )
    errors = first.locator(".video-error").all_inner_texts()
    assert len(errors) == 1 and errors[0].startswith("video could not be played"), errors
