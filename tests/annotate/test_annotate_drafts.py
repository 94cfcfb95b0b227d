"""Machine-drafted captions (caption_drafts.jsonl from `curate 4d captions`) in the review app:
imported with bad lines named, shown to writers as a model's text they can start from, never
submitted or exported unchanged as a person's caption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from annotate_support import ADAPTERS, make_project, query, sign_in_page, writers
from browser import Web
from vidbench.annotate import auth, work
from vidbench.annotate.items import Imported
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.fourd.review.drafts import DRAFTS_FILE, import_drafts
from vidbench.benchmarks.fourd.review.exports import export_captions
from vidbench.cli import main
from vidbench.core.errors import DataError

UID0, UID1 = "0" * 32, f"{1:032x}"
DRAFT = "A red cube spins once, then a blue sphere appears on its left."


def _draft(uid: str, caption: str = DRAFT, **extra: Any) -> str:
    return json.dumps(
        {"uid": uid, "caption": caption, "model": "gemma", "machine_draft": True, **extra}
    )


@pytest.fixture
def project(qa_release: Path, tmp_path: Path) -> Project:
    return make_project(qa_release, tmp_path)


def _import(project: Project, lines: list[str], tmp_path: Path) -> Imported:
    path = tmp_path / DRAFTS_FILE
    path.write_text("\n".join(lines) + "\n")
    conn = project.connect()
    try:
        return import_drafts(conn, project.data, path, "test")
    finally:
        conn.close()


def _item(project: Project, uid: str) -> dict[str, Any]:
    return json.loads(
        query(project, "SELECT data FROM items WHERE id = ?", (f"caption:{uid}",))[0][0]
    )


def _save(project: Project, work_id: int, name: str, content: str) -> dict[str, Any]:
    conn = project.connect()
    try:
        user = next(u for u in auth.users(conn) if u.name == name)
        version = conn.execute("SELECT version FROM work WHERE id = ?", (work_id,)).fetchone()[0]
        return work.save(conn, work_id, user, version, content=content, status="submitted")
    finally:
        conn.close()


def test_import_attaches_drafts_and_names_bad_lines(project: Project, tmp_path: Path) -> None:
    done = _import(
        project,
        [
            _draft(UID0),
            "{not json",
            _draft(UID1, machine_draft=False),
            _draft(UID1, caption="  "),
            json.dumps({"uid": UID1, "caption": DRAFT, "machine_draft": True}),
            _draft("f" * 32),  # an object the project does not have yet: a new caption item
        ],
        tmp_path,
    )
    assert done.added == 2
    assert [p.split(": ", 1)[0] for p in done.problems] == [
        f"{tmp_path / DRAFTS_FILE} line {n}" for n in (2, 3, 4, 5)
    ]
    assert "'machine_draft' must be true" in done.problems[1]
    assert "'model' must name" in done.problems[3]
    assert _item(project, UID0)["drafts"] == [{"model": "gemma", "caption": DRAFT}]
    new = _item(project, "f" * 32)
    assert new["drafts"][0]["caption"] == DRAFT and len(new["views"]) == 24
    again = _import(project, [_draft(UID0)], tmp_path)  # the same draft twice: skipped
    assert again.added == 0 and again.skipped == [f"caption:{UID0} (draft by gemma)"]


def test_an_unedited_draft_is_not_a_human_caption(project: Project, tmp_path: Path) -> None:
    _import(project, [_draft(UID0)], tmp_path)
    (first, name), *others = writers(project, UID0)
    with pytest.raises(DataError, match="gemma's machine draft word for word"):
        _save(project, first, name, "  " + DRAFT.replace(" ", "\n", 2))  # whitespace aside
    assert _save(project, first, name, DRAFT.replace("spins once", "turns around"))["status"] == (
        "submitted"
    )
    for n, (work_id, writer) in enumerate(others):
        _save(project, work_id, writer, f"caption {n} by {writer}")

    conn = project.connect()
    try:
        exported = export_captions(conn, tmp_path / "a.csv", "test")
        assert exported.written == 1
        # a draft imported after someone wrote the same words: that caption leaves the export
        _import(
            project, [_draft(UID0, caption=f"caption 0 by {others[0][1]}", model="qwen")], tmp_path
        )
        exported = export_captions(conn, tmp_path / "b.csv", "test")
    finally:
        conn.close()
    assert exported.written == 0
    assert f"caption:{UID0}: {others[0][1]}'s caption is qwen's machine draft" in exported.left_out


def test_cli_imports_drafts(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "drafts.jsonl"
    path.write_text(_draft(UID1) + "\n{broken\n")
    assert main(["annotate", "import", str(project.path), "drafts", str(path)]) == 0
    printed = capsys.readouterr()
    assert "1 item added" in printed.out and "line 2" in " ".join(printed.err.split())
    assert _item(project, UID1)["drafts"][0]["model"] == "gemma"


@pytest.mark.slow
def test_writer_sees_the_draft_marked_and_starts_from_it(
    project: Project,
    tmp_path: Path,
    web: Web,
) -> None:
    _import(project, [_draft(UID0, caption=DRAFT + ' <img src=x onerror="alert(1)">')], tmp_path)
    work_id, name = writers(project, UID0)[0]
    base = web.serve(create_app(project, ADAPTERS))
    page = web.open()
    sign_in_page(page, base, name)
    page.goto(f"{base}/work/{work_id}")
    box = page.locator("[data-draft]")
    expect(box).to_contain_text("Machine draft by gemma")
    expect(box).to_contain_text('onerror="alert(1)"')  # shown as text
    expect(page.locator("#caption")).to_have_value("")  # never filled in on its own
    box.locator("[data-use-draft]").click()
    expect(page.locator("#caption")).to_have_value(DRAFT + ' <img src=x onerror="alert(1)">')
    web.watch.allow(r"status of 422")  # the unchanged draft's submit, refused below
    page.click("[data-submit]")
    expect(page.locator("#notice")).to_contain_text("machine draft word for word")
    page.fill("#caption", "A red cube turns around; a blue sphere appears beside it.")
    page.click("[data-submit]")  # submitted, then on to the writer's next caption
    expect(page).not_to_have_url(f"{base}/work/{work_id}")
    assert query(project, "SELECT status FROM work WHERE id = ?", (work_id,))[0][0] == "submitted"
