"""The annotation app in Debian's Chromium: two caption writers in two browser contexts do not
see each other's captions, typing is saved without a click (debounced autosave, and a tab closed
before the debounce still sends), two tabs saving the same caption get a conflict shown instead
of an overwrite, a reviewer sends a caption back, and the admin's export equals the expected
CSV. A QA review in the browser (accept, edit, reject with a reason; generated text shown as
text) exports a 4d_qa.json that `vidbench validate 4dbench` accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from annotate_support import ADAPTERS, make_project, qa_candidate, query, sign_in_page
from browser import Web, loop_videos, wait_for
from vidbench.annotate import assign, auth, work
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.fourd.review.items import import_queue
from vidbench.cli import main

pytestmark = pytest.mark.slow
UID0 = "0" * 32


def _content(project: Any, work_id: int) -> tuple[str, int]:
    row = query(project, "SELECT content, version FROM work WHERE id = ?", (work_id,))[0]
    return row[0], row[1]


def _status(project: Any, work_id: int) -> str:
    return str(query(project, "SELECT status FROM work WHERE id = ?", (work_id,))[0][0])


def _submitted(page: Any, project: Any, work_id: int) -> None:
    """After a click on submit: the work is submitted and the page moved on to the next item
    not finished (waited for, so that the test's next page.goto does not race it)."""
    wait_for(lambda: _status(project, work_id) == "submitted", f"work {work_id} submitted")
    expect(page).not_to_have_url(re.compile(rf"/work/{work_id}(\?|$)"))
    page.wait_for_load_state()


def test_two_writers_autosave_conflict_send_back_and_export(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    project = make_project(qa_release, tmp_path)
    writers = [
        (r[0], r[1])
        for r in query(
            project,
            "SELECT w.id, u.name FROM work w JOIN users u ON u.id = w.user_id "
            "WHERE w.item_id = ? AND w.job = 'write' ORDER BY w.slot",
            (f"caption:{UID0}",),
        )
    ]
    (id_a, name_a), (id_b, name_b) = writers[0], writers[1]
    base = web.serve(create_app(project, ADAPTERS))
    a, b = web.open(), web.open()
    sign_in_page(a, base, name_a)
    sign_in_page(b, base, name_b)
    assert a.locator(f"[data-work-row='{id_a}']").count() == 1
    assert a.locator(f"[data-work-row='{id_b}']").count() == 0

    # typing is saved without any click (debounced autosave)
    a.goto(f"{base}/work/{id_a}?views=0,12")
    assert a.locator("video").count() == 2  # the chosen views, one control
    a.fill("#caption", "A <b>red</b> cube spins to the left.")
    expect(a.locator("[data-version]")).to_have_text("1")
    assert _content(project, id_a) == ("A <b>red</b> cube spins to the left.", 1)

    b.goto(f"{base}/work/{id_b}")
    assert "red" not in b.locator("main").inner_text()
    b.fill("#caption", "A cube turning.")
    b.click("[data-submit]")  # submitted, then on to the next item not finished
    _submitted(b, project, id_b)

    # a tab closed before the debounce fired still sends what was typed
    a.fill("#caption", "A red cube spins to the left, then stops.")
    a.close(run_before_unload=True)
    wait_for(
        lambda: _content(project, id_a)[0] == "A red cube spins to the left, then stops.",
        "the closed tab's text",
    )

    # two tabs on the same caption: the second save is refused and the conflict shown
    web.watch.allow(r"status of 409")
    a1 = web.open()
    sign_in_page(a1, base, name_a)
    a2 = web.open(a1.context)
    a1.goto(f"{base}/work/{id_a}")
    a2.goto(f"{base}/work/{id_a}")
    a1.fill("#caption", "Tab one's caption.")
    expect(a1.locator("[data-version]")).to_have_text("3")
    a2.fill("#caption", "Tab two's caption.")
    a2.wait_for_selector("[data-conflict]:not([hidden])")
    assert name_a in a2.locator("[data-conflict-message]").inner_text()
    assert a2.locator("[data-theirs]").inner_text() == "Tab one's caption."
    assert _content(project, id_a) == ("Tab one's caption.", 3)
    a2.click("[data-keep-mine]")  # a deliberate choice, recorded as a new version
    wait_for(lambda: _content(project, id_a) == ("Tab two's caption.", 4), "keep mine")
    a2.click("[data-submit]")
    _submitted(a2, project, id_a)

    # the other three writers submit through the library; the reviewer sends A's back
    people = {u.name: u for u in auth.users(project.connect())}
    for n, (work_id, name) in enumerate(writers[2:], start=3):
        conn = project.connect()
        work.save(conn, work_id, people[name], 0, f"Caption {n}.", "submitted")
        conn.close()
    r = web.open()
    sign_in_page(r, base, "rita")
    r.goto(f"{base}/review/captions")
    row = r.locator(f"[data-caption-row='{id_a}']")
    assert row.locator(".caption").inner_text() == "Tab two's caption."
    row.locator("[data-row-comment]").fill("say which way it turns <i>exactly</i>")
    row.locator("[data-review=returned]").click()
    expect(row.locator("[data-row-status]")).to_have_text("returned")

    # the writer sees the comment (as text), revises and resubmits
    a2.goto(f"{base}/work/{id_a}")
    assert a2.locator("[data-comment]").inner_text() == "say which way it turns <i>exactly</i>"
    a2.fill("#caption", "A red cube turns left, then stops.")
    a2.click("[data-submit]")
    _submitted(a2, project, id_a)

    # the admin exports the captions from the admin page
    admin = web.open()
    sign_in_page(admin, base, "ada")
    admin.goto(f"{base}/admin")
    admin.select_option("[data-admin-export] select[name=kind]", "captions")
    admin.click("[data-admin-export] button[type=submit]")
    expect(admin.locator("[data-admin-result]")).to_contain_text('"written": 1')
    expected = (
        "folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        f'{UID0},"A red cube turns left, then stops.",A cube turning.,Caption 3.,Caption 4.,'
        "Caption 5.\n"
    )
    assert (project.path / "exports" / "human_annotations.csv").read_text("utf-8") == expected
    # every write is kept with its author
    authors = query(
        project,
        "SELECT u.name FROM revisions r JOIN users u ON u.id = r.author WHERE r.work_id = ? "
        "ORDER BY r.version",
        (id_a,),
    )
    names = [x[0] for x in authors]
    assert names[:6] == [name_a] * 5 + ["rita"] and set(names[6:]) == {name_a}


def test_qa_review_in_the_browser_exports_a_valid_4d_qa_json(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
    capsys,
) -> None:
    web.watch.allow(r"status of 422")  # the submit refused below for want of a reason
    project = make_project(qa_release, tmp_path)
    question = "What colour is it? <script>alert('q')</script>"
    options = ["(A) red", "(B) <img src=x onerror=alert(1)>", "(C) green", "(D) white"]
    checked = {"validator": "<script>alert('model')</script> looks fine"}
    generated = qa_candidate(UID0, "generated", question, options, provenance=checked)
    queue = tmp_path / "review_queue.jsonl"
    queue.write_text(json.dumps(generated) + "\n")
    conn = project.connect()
    assert import_queue(conn, project.data, queue, "ada").added == 1
    assign.assign(conn, "qa", None, "ada")
    conn.close()
    rows = query(
        project,
        "SELECT w.id, w.item_id, u.name FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE w.job = 'review' ORDER BY w.item_id",
    )
    by_item = {item: (work_id, name) for work_id, item, name in rows}
    gen_work, reviewer = by_item[f"qa:{UID0}_generated"]
    theirs = sorted(k for k, (_, n) in by_item.items() if n == reviewer)
    edit_item, reject_item = [k for k in theirs if k != f"qa:{UID0}_generated"][:2]
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, reviewer)

    # generated text (question, options, the model's verdict) is shown as text, never run
    page.goto(f"{base}/work/{gen_work}")
    assert "<script>alert('q')</script>" in page.locator(".question").inner_text()
    assert page.locator(".options img").count() == 0
    page.check("input[name=decision][value=accept]")
    page.click("[data-submit]")
    _submitted(page, project, gen_work)

    page.goto(f"{base}/work/{by_item[edit_item][0]}?views=0,5,17")
    videos = page.locator("video")
    expect(videos).to_have_count(3)  # the chosen views, under one control
    loop_videos(page)
    page.click("[data-play]")
    expect(page.locator("[data-play-label]")).to_have_text("pause")
    assert videos.evaluate_all("vs => vs.map(v => v.paused)") == [False] * 3
    page.click("[data-play]")
    times = videos.evaluate_all("vs => vs.map(v => v.paused ? v.currentTime : -1)")
    assert min(times) >= 0 and max(times) - min(times) < 0.2, times
    page.check("input[name=decision][value=edit]")
    page.fill("textarea[name=Question]", "How many times does it turn?")
    page.select_option("select[name=AnswerIndex]", "3")
    page.click("[data-submit]")
    _submitted(page, project, by_item[edit_item][0])

    page.goto(f"{base}/work/{by_item[reject_item][0]}?views=0")
    page.check("input[name=decision][value=reject]")
    page.click("[data-submit]")  # refused: a rejection needs a reason
    expect(page.locator("#notice")).to_contain_text("a rejection needs a reason")
    page.fill("input[name=reason]", "two options are right")
    page.click("[data-submit]")
    _submitted(page, project, by_item[reject_item][0])

    # the other reviews are accepted through the library
    people = {u.name: u for u in auth.users(project.connect())}
    done = {gen_work, by_item[edit_item][0], by_item[reject_item][0]}
    for work_id, name in by_item.values():
        if work_id not in done:
            conn = project.connect()
            work.save(conn, work_id, people[name], 0, '{"decision": "accept"}', "submitted")
            conn.close()

    admin = web.open()
    sign_in_page(admin, base, "ada")
    admin.goto(f"{base}/admin")
    admin.select_option("[data-admin-export] select[name=kind]", "qa")
    admin.click("[data-admin-export] button[type=submit]")
    expect(admin.locator("[data-admin-result]")).to_contain_text('"written": 20')
    out = project.path / "exports" / "4dbench-qa"
    qa = json.loads((out / "4d_qa.json").read_text("utf-8"))
    assert len(qa) == 20 and reject_item.removeprefix("qa:") not in qa
    edited = qa[edit_item.removeprefix("qa:")]
    assert edited["Question"] == "How many times does it turn?" and edited["Answer index"] == 3
    assert qa[f"{UID0}_generated"]["Options"][1] == "(B) <img src=x onerror=alert(1)>"
    capsys.readouterr()
    assert main(["--no-progress", "validate", "4dbench", str(out)]) == 0
