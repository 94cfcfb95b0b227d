"""`vidbench view` on a 4D-Bench QA run, in Debian's Chromium from file://: the counts of
results.json, the paper table, filters and search, a frame thumbnail and the videos of the
views the model saw (screenshots under test-artifacts/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import make_qa_dataset
from vidbench.cli import main
from view_support import matching, open_report, records, run_model, set_filter

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view")
    data = make_qa_dataset(root / "data", n_objects=2)
    return run_model(data, "random", root / "random", root / "cache")


@pytest.fixture(scope="module")
def report(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    return out


def test_the_files_of_the_report(run: Path, report: Path) -> None:
    names = {p.name for p in report.iterdir()}
    assert {"index.html", "app.js", "app.css", "data", "thumbs", "videos"} <= names
    assert sorted(p.name for p in (report / "data").iterdir()) == [
        "meta.js",
        "prompts-000.js",
        "samples-000.js",
        "search-000.js",
    ]
    videos = list((report / "videos").iterdir())
    assert len(videos) == 2 * 3  # two objects, the three official views each
    assert all(v.is_symlink() and not Path(v.readlink()).is_absolute() for v in videos)
    assert all(v.resolve().is_file() for v in videos)
    # 10 samples x 18 frames; the test data's objects share their videos' pixels (a colour
    # per view and frame: the same frames, encoded to the same bitstream whatever ran before in
    # the process, test_encode.py), and a thumbnail is written once per content: 3 views x 6 frames
    assert len(list((report / "thumbs").rglob("*.jpg"))) == 18


def test_report_opens_from_file_and_filters(
    run: Path, report: Path, open_page: Callable[..., Any]
) -> None:
    results = json.loads((run / "results.json").read_text())
    scored = records(run)
    page = open_report(open_page, report)
    assert matching(page) == results["n"] == len(scored) == 10
    assert page.locator("article.sample").count() == 10
    # the paper table: the Overall cell with its interval and n, the best marked
    overall = results["columns"]["Overall"]
    table = page.locator("table.paper")
    assert f"{overall:.1f}" in table.inner_text()
    assert f"n={results['column_n']['Overall']}" in table.inner_text()
    assert page.locator("table.paper td.best").count() == len(results["columns"])
    # 3 views a sample, none missing; each a poster frame until its sample is in view
    assert page.locator("#samples .video-slot").count() == 30
    assert page.locator("#samples .video-slot img.poster, #samples .video-slot video").count() == 30
    page.wait_for_function("() => document.querySelector('#figures img').naturalWidth > 0")
    assert page.locator("#samples .missing, #samples .error-text").count() == 0

    correct = sum(1 for r in scored if r["outcome"]["kind"] == "correct")
    set_filter(page, "#f-outcome", "correct")
    assert matching(page) == correct == page.locator("article.sample").count()
    set_filter(page, "#f-outcome", "wrong")
    assert matching(page) == 10 - correct
    set_filter(page, "#f-outcome", "")
    set_filter(page, "#f-group", "Action")
    assert matching(page) == 2
    assert set(page.locator("article.sample .tag").all_inner_texts()) == {"Action"}
    set_filter(page, "#f-group", "")
    target = scored[3]["id"]
    page.fill("#f-search", target)
    page.wait_for_function("() => document.body.dataset.matching === '1'")
    assert page.locator("article.sample").get_attribute("data-id") == target
    page.fill("#f-search", "object 1?")  # the questions' text: five about object 1
    page.wait_for_function("() => document.body.dataset.matching === '5'")
    page.fill("#f-search", "")
    page.wait_for_function("() => document.body.dataset.matching === '10'")


def test_thumbnails_and_videos_load(report: Path, open_page: Callable[..., Any]) -> None:
    page = open_report(open_page, report)
    first = page.locator("article.sample").first
    thumbs = first.locator("table.frames img")
    assert thumbs.count() == 18  # 3 views x 6 frames, a row per view
    assert first.locator("table.frames tr").count() == 3
    thumbs.first.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('article.sample table.frames img').naturalWidth > 0"
    )
    first.locator(".videos").scroll_into_view_if_needed()  # players are made once in view
    page.wait_for_function(
        "() => document.querySelector('article.sample').querySelectorAll('video').length === 3"
    )
    page.wait_for_function(
        "() => [...document.querySelector('article.sample').querySelectorAll('video')]"
        ".every(v => v.readyState >= 1 && v.duration > 0)",
        timeout=10000,
    )
    first.locator("button", has_text="play views together").click()
    page.wait_for_function(
        "() => [...document.querySelector('article.sample').querySelectorAll('video')]"
        ".every(v => !v.paused)"
    )


def test_one_run_given_twice_is_shown_once(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "again"
    link.symlink_to(run)
    out = tmp_path / "report"
    args = ["--no-progress", "view", str(run), str(link), "--out", str(out), "--no-thumbnails"]
    assert main(args) == 0
    assert f"{link}: given twice: shown once" in " ".join(capsys.readouterr().err.split())
    meta = (out / "data" / "meta.js").read_text()
    shown = json.loads(meta[meta.index("(") + 1 : meta.rindex(")")])
    assert [run["path"] for run in shown["runs"]] == [str(run)]  # one run in the report
