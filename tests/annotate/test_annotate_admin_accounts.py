"""Accounts from the admin page: add a person (a password made and shown once, or the admin's),
change a role, remove a person, by the same rules as `vidbench annotate users` (auth.py): the
removed person's sessions end at once, their unfinished work goes back to assign, the last admin
stays; admins only, with the session's CSRF token. Through the real app (TestClient), and once in
Debian's Chromium on a phone-sized screen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from annotate_support import (
    ADAPTERS,
    PASSWORD,
    accounts,
    make_project,
    query,
    sign_in,
    sign_in_page,
)
from browser import ARTIFACTS, Web
from vidbench.annotate import assign, auth, db, work
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app


def _client(project: Project, name: str, password: str | None = None) -> tuple[TestClient, dict]:
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    token = sign_in(client, name) if password is None else sign_in(client, name, password)
    return client, {"X-CSRF-Token": token}


def _open(project: Project, name: str, job: str) -> list[str]:
    rows = query(
        project,
        "SELECT w.status FROM work w JOIN users u ON u.id = w.user_id WHERE u.name = ? "
        "AND w.job = ? ORDER BY w.id",
        (name, job),
    )
    return [r[0] for r in rows]


def test_an_admin_adds_changes_and_removes_people_from_the_admin_page(
    qa_release: Path, tmp_path: Path
) -> None:
    project = make_project(qa_release, tmp_path)
    admin, headers = _client(project, "ada")
    rita, rita_headers = _client(project, "rita")
    ann1, _ = _client(project, "ann1")

    # admins only, and only with the session's CSRF token
    new = {"name": "newbie", "role": "annotator"}
    assert rita.post("/api/admin/users", json=new, headers=rita_headers).status_code == 403
    assert admin.post("/api/admin/users", json=new).status_code == 403
    assert "newbie" not in accounts(project)

    # a person added without a password gets one, answered once; it signs in
    added = admin.post("/api/admin/users", json=new, headers=headers)
    assert added.status_code == 200, added.text
    password = added.json()["password"]
    assert len(password) >= 16 and added.headers["cache-control"] == "no-store"
    _client(project, "newbie", password)
    chosen = {"name": "nadia", "role": "reviewer", "password": "a long password"}
    answer = admin.post("/api/admin/users", json=chosen, headers=headers).json()
    assert answer == {"name": "nadia", "role": "reviewer", "password": None}  # never echoed
    assert accounts(project)["nadia"].role == "reviewer"
    events = query(project, "SELECT author, detail FROM events WHERE action = 'user.add'")
    assert ("ada", "newbie (annotator)") in [tuple(e) for e in events]
    for bad, said in (
        ({**new, "name": "ann1"}, "exists already"),
        ({**new, "name": "../x"}, "user name '../x'"),
        ({**new, "name": "cli"}, "gives the command line"),  # the history would credit it
        ({**new, "name": "shorty", "password": "short"}, "at least 8"),
        ({**new, "role": "boss"}, "role"),
    ):
        refused = admin.post("/api/admin/users", json=bad, headers=headers)
        assert refused.status_code == 422 and said in refused.json()["error"], refused.text

    # a reviewer made annotator gives back their QA reviews, to assign again
    reviews = _open(project, "rob", "review")
    assert reviews and set(reviews) == {"todo"}
    url = "/api/admin/users/rob/role"
    changed = admin.post(url, json={"role": "annotator"}, headers=headers).json()
    assert changed["before"] == "reviewer" and changed["role"] == "annotator"
    assert changed["released"] == {"qa": len(reviews)} and not changed["you"]
    assert set(_open(project, "rob", "review")) == {db.RELEASED}

    captions = _open(project, "ann1", "write")
    # removing someone signed in ends their session at once; their open work goes back
    removed = admin.post("/api/admin/users/ann1/remove", headers=headers).json()
    assert (
        removed["sessions"] == 1
        and removed["removed"]
        and removed["released"] == {"caption": len(captions)}
    )
    assert ann1.get("/api/work/1").status_code == 401
    assert set(_open(project, "ann1", "write")) == {db.RELEASED}
    given_back = query(
        project,
        "SELECT r.status, u.name FROM revisions r JOIN users u ON u.id = r.author JOIN work w "
        "ON w.id = r.work_id WHERE w.user_id = (SELECT id FROM users WHERE name = 'ann1')",
    )
    assert [tuple(r) for r in given_back] == [(db.RELEASED, "ada")] * len(captions)
    again = admin.post("/api/admin/users/ann1/remove", headers=headers)
    assert again.status_code == 422 and "was removed" in again.json()["error"]
    page = admin.get("/admin").text
    assert re.search(r'data-account="ann1">.*?removed <time', page, re.S)

    # another admin may leave by their own hand: the page is told it was them (it signs out)
    admin.post("/api/admin/users/rita/role", json={"role": "admin"}, headers=headers)
    left = rita.post("/api/admin/users/rita/remove", headers=rita_headers)
    assert left.status_code == 200 and left.json()["you"] is True
    assert rita.get("/admin", follow_redirects=False).headers["location"] == "/login"

    # the last admin stays, whoever asks
    for path, body in (("ada/remove", None), ("ada/role", {"role": "reviewer"})):
        kept = admin.post(f"/api/admin/users/{path}", json=body, headers=headers)
        assert kept.status_code == 422 and "last admin" in kept.json()["error"]
    assert accounts(project)["ada"].role == "admin" and not accounts(project)["ada"].removed


@pytest.mark.slow
def test_work_given_out_again_says_so_on_its_owners_page(qa_release: Path, tmp_path: Path) -> None:
    """A reviewer made annotator and reviewer again gets their QA reviews back from the admin's
    assign: their page says who gave it (the admin made the last version, but saved nothing)."""
    project = make_project(qa_release, tmp_path)
    admin, headers = _client(project, "ada")
    rob, _ = _client(project, "rob")
    for role in ("annotator", "reviewer"):
        admin.post("/api/admin/users/rob/role", json={"role": role}, headers=headers)
    given = admin.post("/api/admin/assign", json={"kind": "qa"}, headers=headers)
    assert given.status_code == 200 and given.json()["added"] >= 1, given.text
    first = query(
        project,
        "SELECT w.id FROM work w JOIN users u ON u.id = w.user_id WHERE u.name = 'rob' "
        "AND w.job = 'review' AND w.status = 'todo' AND w.version > 0 ORDER BY w.id",
    )[0][0]
    page = rob.get(f"/work/{first}").text
    said = re.search(r"<span data-saved[^>]*>([^<]*)</span>", page)
    assert said is not None and said.group(1).startswith("given to you by ada at "), page
    assert 'data-said="given to you by ada"' in page
    assert rob.get(f"/api/work/{first}").json()["given_again"] is True


def test_work_given_out_again_by_the_command_line_names_nobody(
    qa_release: Path, tmp_path: Path
) -> None:
    """The command line acts on the owner's account (it has none): "given to you again", not
    "saved by rob" (rob saved nothing), and a save from a tab opened before says what happened."""
    project = make_project(qa_release, tmp_path)
    conn = project.connect()
    try:
        for role in ("annotator", "reviewer"):
            auth.set_role(conn, "rob", role, db.COMMAND_LINE)
        assign.assign(conn, "qa", None, db.COMMAND_LINE)
        rob = accounts(project)["rob"]
        given = [w for w in work.mine(conn, rob, "review") if w["version"] > 0]
        found = work.row(conn, int(given[0]["id"]))
        assert found is not None and found["given_again"]
        assert work.last_change(found, rob) == "given to you again"
        assert work.last_change(found) == "given to rob again"  # to someone else reading it
        with pytest.raises(work.Conflict, match="^given to rob again at .* since you loaded it"):
            work.save(conn, found["id"], rob, 0, '{"decision": "accept"}')
        saved = work.save(conn, found["id"], rob, found["version"], '{"decision": "accept"}')
        again = work.row(conn, saved["id"])
        assert again is not None and work.last_change(again, rob) == "saved by rob"
    finally:
        conn.close()


@pytest.mark.slow
def test_people_in_chromium_on_a_phone(
    qa_release: Path, tmp_path: Path, web: Web, browser: object
) -> None:
    """At 390x844 the admin page's tables fit the screen (no sideways scrolling); an admin adds
    a person, sees the password made for them, changes a role and removes someone."""
    project = make_project(qa_release, tmp_path)
    base = web.serve(create_app(project, ADAPTERS))
    phone = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        page = web.open(phone)
        sign_in_page(page, base, "ada")
        page.goto(f"{base}/admin")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert page.locator("[data-people] td").first.bounding_box()["width"] > 100  # type: ignore[index]

        form = page.locator("[data-account-add]")
        form.locator("input[name=name]").fill("newbie")
        form.locator("select[name=role]").select_option("reviewer")
        form.locator("button").click()
        result = page.locator("[data-accounts-result]")
        expect(result).to_contain_text("added newbie (reviewer)")
        password = re.search(r"password: (\S+)", result.inner_text()).group(1)  # type: ignore[union-attr]
        row = page.locator("[data-account='newbie']")
        expect(row.locator("[data-account-role-now]")).to_have_text("reviewer")
        expect(page.get_by_label("new role for newbie")).to_have_value("reviewer")

        reviews = len(
            query(
                project,
                "SELECT id FROM work WHERE job = 'review' AND user_id = "
                "(SELECT id FROM users WHERE name = 'rob')",
            )
        )
        rob = page.locator("[data-account='rob']")
        rob.locator("select[name=role]").select_option("annotator")
        rob.locator("text=change role").click()
        expect(result).to_contain_text("rob: reviewer -> annotator")
        expect(result).to_contain_text(
            f"{reviews} unfinished pieces of work back in the pool (qa {reviews})"
        )

        ann2 = page.locator("[data-account='ann2']")
        ann2.locator("summary").click()
        ann2.locator("text=remove ann2").click()
        expect(result).to_contain_text("removed ann2: 0 sessions ended")
        expect(ann2).to_contain_text("removed")
        assert accounts(project)["ann2"].removed and accounts(project)["rob"].role == "annotator"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        expect(result).to_contain_text(f"password: {password}")  # still there to hand over
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "admin-people-390.png"), full_page=True)

        # the caption review's table too: each caption across the screen, not a column of
        # a few letters
        (wid, writer) = query(
            project,
            "SELECT w.id, u.name FROM work w JOIN users u ON u.id = w.user_id "
            "WHERE w.job = 'write' AND u.removed IS NULL LIMIT 1",
        )[0]
        conn = project.connect()
        try:
            owner = auth.check_password(conn, writer, PASSWORD)
            assert owner is not None
            work.save(conn, wid, owner, 0, "A red cube turns slowly to the left.", "submitted")
        finally:
            conn.close()
        page.goto(f"{base}/review/captions")
        caption = page.locator(f"[data-caption-row='{wid}'] .caption")
        assert caption.bounding_box()["width"] > 300  # type: ignore[index]
        assert page.evaluate("document.documentElement.scrollWidth") <= 390

        other = web.open()
        other.goto(f"{base}/login")
        other.fill("input[name=name]", "newbie")
        other.fill("input[name=password]", password)
        other.click("button[type=submit]")
        other.wait_for_url(f"{base}/")
    finally:
        phone.close()
