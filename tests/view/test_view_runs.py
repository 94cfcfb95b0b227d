"""`vidbench view` of two runs side by side (disagreements first), and of runs that lost
pieces: an older results dir with files missing, a moved data folder, a frame cache and videos
that are gone; the report still renders what it has and says what is missing."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import make_qa_dataset
from vidbench.cli import main
from vidbench.view.build import ViewOptions, write_report
from vidbench.view.collect import collect_runs
from view_support import matching, open_report, records, run_model, set_filter

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("two")
    data = make_qa_dataset(root / "data", n_objects=4)
    first = run_model(data, "random", root / "random", root / "cache")
    return first, run_model(data, "constant:A", root / "constant", root / "cache")


def test_two_runs_side_by_side_disagreements_first(
    two_runs: tuple[Path, Path], tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    a, b = ({r["id"]: r["parsed"] for r in records(run)} for run in two_runs)
    differ = {i for i in a if a[i] != b[i]}
    assert 0 < len(differ) < 20
    report = tmp_path / "report"
    assert main(["view", *map(str, two_runs), "--out", str(report), "--videos", "none"]) == 0
    page = open_report(open_page, report)
    assert matching(page) == 20
    cards = page.locator("article.sample")
    assert cards.first.locator("section.run").count() == 2
    flags = page.evaluate(
        "[...document.querySelectorAll('article.sample')]"
        ".map(c => c.classList.contains('disagree'))"
    )
    assert flags == [True] * len(differ) + [False] * (20 - len(differ))
    shown = set(page.evaluate(
        "[...document.querySelectorAll('article.sample.disagree')].map(c => c.dataset.id)"
    ))  # fmt: skip
    assert shown == differ
    page.check("#f-disagree")
    page.wait_for_function(f"() => document.body.dataset.matching === '{len(differ)}'")
    page.uncheck("#f-disagree")
    set_filter(page, "#f-run", "1")  # constant:A right exactly where gold is A
    set_filter(page, "#f-outcome", "correct")
    right = [r for r in records(two_runs[1]) if r["outcome"]["kind"] == "correct"]
    assert matching(page) == len(right) == 5
    assert "videos" not in {p.name for p in report.iterdir()}  # --videos none


def test_an_older_results_dir_with_files_missing(tmp_path: Path, two_runs: tuple[Path, Path],
                                                open_page: Callable[..., Any]) -> None:  # fmt: skip
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(two_runs[0] / "samples.jsonl", old / "samples.jsonl")  # no results, config, store
    built = write_report(collect_runs([old], with_samples=False), ViewOptions(tmp_path / "report"))
    assert built.samples == 20
    told = "\n".join(built.messages)
    assert "results.json" in told and "run.json" in told and "store.sqlite" in told
    page = open_report(open_page, tmp_path / "report")
    assert matching(page) == 20
    messages = page.locator("#messages").inner_text()
    assert "no readable results.json" in messages and "store.sqlite is missing" in messages
    assert page.locator("table.paper").count() == 0
    assert "the sample's data is not available" in page.locator("#samples").inner_text()


def test_moved_data_and_missing_cache_and_videos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_page: Callable[..., Any]
) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    run = run_model(data, "random", tmp_path / "run", tmp_path / "cache")
    shutil.rmtree(tmp_path / "cache")
    videos = data / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos"
    shutil.rmtree(videos)  # the cache and the videos are gone: frames cannot be made
    report = tmp_path / "report"
    assert main(["view", str(run), "--out", str(report)]) == 0
    page = open_report(open_page, report)
    assert matching(page) == 5
    samples = page.locator("#samples")
    assert samples.locator(".frames-error").count() == 5
    assert "frames not available" in samples.inner_text() and "not found" in samples.inner_text()
    assert samples.locator(".missing").count() >= 5

    moved = tmp_path / "moved"
    data.rename(moved)  # the data folder moved: the report says so and shows the rest
    capsys.readouterr()
    assert main(["view", str(run), "--out", str(tmp_path / "report2")]) == 0
    assert "not found (moved?)" in " ".join(capsys.readouterr().err.split())
    page = open_report(open_page, tmp_path / "report2")
    assert matching(page) == 5
    assert "not found (moved?)" in page.locator("#messages").inner_text()
    assert page.locator("table.paper").count() == 1


def test_a_deleted_thumbnail_shows_as_missing(
    tmp_path: Path, open_page: Callable[..., Any], watch: Any
) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    run = run_model(data, "random", tmp_path / "run", tmp_path / "cache")
    report = tmp_path / "report"
    assert main(["view", str(run), "--out", str(report), "--videos", "none"]) == 0
    gone = sorted((report / "thumbs").rglob("*.jpg"))[0]
    gone.unlink()
    watch.allow(r"ERR_FILE_NOT_FOUND")  # the browser's own line about the missing file
    page = open_report(open_page, report)
    page.evaluate("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
    # every image loaded or failed (a failed one is replaced by its "missing" mark at once),
    # then both counted in one step: counted apart, images failing in between were counted twice
    page.wait_for_function(
        "() => document.querySelectorAll('#samples .missing').length > 0"
        " && [...document.querySelectorAll('#samples img')].every((i) => i.complete)"
    )
    shown, missing = page.evaluate(
        "() => ['#samples img', '#samples .missing']"
        ".map((s) => document.querySelectorAll(s).length)"
    )
    assert shown + missing == 90 and missing > 0


def test_every_run_of_many_is_in_view_and_a_video_gone_since_is_said(
    tmp_path: Path, open_page: Callable[..., Any], watch: Any
) -> None:
    """Eight runs side by side: the answers stood in one row scrolled sideways, five showing
    and nothing saying there were more. A linked video whose source moved after the report was
    built (or a report copied elsewhere) said only 'Format error'."""
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    run = run_model(data, "random", tmp_path / "run", tmp_path / "cache")
    runs = [run, *(tmp_path / f"copy{i}" for i in range(7))]
    for copy in runs[1:]:
        shutil.copytree(run, copy)
    report = tmp_path / "report"
    assert main(["view", *map(str, runs), "--out", str(report)]) == 0
    data.rename(tmp_path / "moved")  # the links now point at nothing
    watch.allow("ERR_FILE_NOT_FOUND")
    page = open_report(open_page, report)
    card = page.locator("article.sample").first
    right = card.evaluate("(c) => c.getBoundingClientRect().right")
    edges = card.locator("section.run").evaluate_all(
        "(runs) => runs.map((r) => r.getBoundingClientRect().right)"
    )
    assert len(edges) == 8 and max(edges) <= right
    card.locator(".videos").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('.video-error') !== null")
    said = card.locator(".video-error").first.inner_text()
    assert "its file is not there" in said and "--videos copy" in said
