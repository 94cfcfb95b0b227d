"""The pages as a reviewer uses them, in Debian's Chromium: the question comes first, with the
official three views (1, 8, 16) large and the other 21 one click away (not loaded before); a
"next item" link; long options shown whole in the edit boxes; provenance readable (no `\\u003c`);
the home page grouped by task and status with counts; caption review with the object's videos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate_support import (
    ADAPTERS,
    make_project,
    qa_candidate,
    query,
    sign_in_page,
    work_ids,
    writers,
)
from browser import Web, loop_videos
from vidbench.annotate import assign, auth, work
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.fourd.review.items import import_queue

pytestmark = pytest.mark.slow
UID0 = "0" * 32
LONG = (
    "(B) a deep blue that turns to violet as the object rotates past the eighth camera of the ring"
)


def test_a_reviewer_sees_the_question_and_three_views_first(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    project = make_project(qa_release, tmp_path)
    queue = tmp_path / "queue.jsonl"
    options = ["(A) red", LONG, "(C) green", "(D) white"]
    checked = {"validator": {"verdict": "accept", "reason": "fine <b>ok</b> & sound"}}
    question = "Which colour does the object show first?"
    candidate = qa_candidate(UID0, "gen", question, options, answer=2, provenance=checked)
    queue.write_text(json.dumps(candidate) + "\n")
    conn = project.connect()
    import_queue(conn, project.data, queue, "ada")
    assign.assign(conn, "qa", None, "ada")
    conn.close()
    reviewer_work = query(
        project,
        "SELECT w.id, u.name FROM work w JOIN users u ON u.id = w.user_id WHERE w.item_id = ?",
        (f"qa:{UID0}_gen",),
    )[0]
    work_id, reviewer = reviewer_work
    theirs = work_ids(project, reviewer, "review")
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in_page(page, base, reviewer)
    page.goto(f"{base}/work/{work_id}")

    question = page.locator(".question").bounding_box()
    shown = page.locator("video:visible")
    expect(shown).to_have_count(3)
    assert shown.evaluate_all("vs => vs.map(v => v.dataset.view)") == ["1", "8", "16"]
    first = shown.first.bounding_box()
    assert question["y"] < first["y"] and first["y"] + first["height"] < 900  # on the first screen
    assert min(shown.evaluate_all("vs => vs.map(v => v.clientWidth)")) >= 400
    others = page.locator("[data-more-views] video")
    expect(others).to_have_count(21)
    assert set(others.evaluate_all("vs => vs.map(v => v.preload)")) == {"none"}
    page.click("[data-more-views] summary")
    expect(page.locator("video:visible")).to_have_count(24)

    provenance = page.locator("pre.provenance").text_content()
    assert "fine <b>ok</b> & sound" in provenance and "\\u003c" not in provenance
    page.check("input[name=decision][value=edit]")
    boxes = page.locator("[data-edit-fields] textarea[name^=Option]")
    expect(boxes).to_have_count(4)
    assert boxes.nth(1).input_value() == LONG
    cut = boxes.evaluate_all(
        "bs => bs.filter(b => b.scrollWidth > b.clientWidth + 1"
        " || b.scrollHeight > b.clientHeight + 1)"
    )
    assert cut == []  # every option is shown whole

    following = theirs[theirs.index(work_id) + 1]  # the next in their list, in item order
    expect(page.locator("[data-next]")).to_have_attribute("href", f"/work/{following}")
    page.click("[data-next]")
    expect(page).to_have_url(f"{base}/work/{following}")


def test_the_home_page_groups_work_and_caption_review_shows_videos(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    project = make_project(qa_release, tmp_path)
    conn = project.connect()
    assign.assign(conn, "answer", 1, "ada")
    people = {u.name: u for u in auth.users(conn)}
    for work_id, name in writers(project, UID0):
        work.save(conn, work_id, people[name], 0, f"A cube spins, says {name}.", "submitted")
    conn.close()
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, "ann1")
    write = page.locator("[data-task=write]")
    mine = query(
        project,
        "SELECT w.job, w.status, COUNT(*) FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE u.name = 'ann1' GROUP BY w.job, w.status",
    )
    counts = {(job, status): n for job, status, n in mine}
    total = sum(n for (job, _), n in counts.items() if job == "write")
    expected = f"{total} in all · {counts[('write', 'todo')]} to do · 1 submitted"
    expect(write.locator("[data-task-counts]")).to_have_text(expected)
    expect(write.locator("[data-group=submitted]")).not_to_have_attribute("open", "")
    expect(write.locator("[data-group=todo] tr[data-work-row]")).to_have_count(
        counts[("write", "todo")]
    )
    expect(page.locator("[data-task=answer] [data-group=todo] tr[data-work-row]")).to_have_count(
        counts[("answer", "todo")]
    )

    reviewer = web.open()
    sign_in_page(reviewer, base, "rita")
    reviewer.goto(f"{base}/review/captions")
    block = reviewer.locator(f"[data-object='caption:{UID0}']")
    expect(block.locator("video")).to_have_count(3)
    expect(block.locator("[data-caption-row]")).to_have_count(5)
    loop_videos(reviewer)
    block.locator("[data-play]").click()
    expect(block.locator("[data-play-label]")).to_have_text("pause")
