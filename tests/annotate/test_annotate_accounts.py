"""People leaving or changing role: `annotate users role` and `users remove`. A removed person's
sessions end at once and their unfinished work goes back to `annotate assign`, their submitted
work stays under their name; a demoted admin loses the admin pages on the next request; the last
admin stays. Checked on the CLI and against the real server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate_support import ADAPTERS, PASSWORD, accounts, make_project, query, sign_in_page
from browser import Web
from vidbench.annotate import assign, auth, db, exports, progress, work
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.cli import main


def _save(project: Project, work_id: int, name: str, content: str, status: str) -> None:
    conn = project.connect()
    try:
        user = auth.check_password(conn, name, PASSWORD)
        assert user is not None
        version = conn.execute("SELECT version FROM work WHERE id = ?", (work_id,)).fetchone()[0]
        work.save(conn, work_id, user, version, content, status)
    finally:
        conn.close()


def _qa_reviews(project: Project, name: str) -> list[tuple[int, str]]:
    rows = query(
        project,
        "SELECT w.id, w.item_id FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE u.name = ? AND w.job = 'review' ORDER BY w.item_id",
        (name,),
    )
    return [(r[0], r[1]) for r in rows]


def test_role_and_remove_from_the_command_line(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = make_project(qa_release, tmp_path)
    p = str(project.path)
    capsys.readouterr()
    # the last admin can be neither demoted nor removed, and nothing changes
    assert main(["annotate", "users", "role", p, "ada", "reviewer"]) == 2
    assert "last admin" in capsys.readouterr().err
    assert main(["annotate", "users", "remove", p, "ada"]) == 2
    assert "last admin" in capsys.readouterr().err
    assert accounts(project)["ada"].role == "admin"
    assert main(["annotate", "users", "role", p, "nobody", "admin"]) == 2
    assert "no user 'nobody'" in capsys.readouterr().err

    assert main(["annotate", "users", "role", p, "rob", "admin"]) == 0
    said = capsys.readouterr().out
    assert "rob: reviewer -> admin" in said
    assert "nothing given back: their unfinished work is all of jobs the admin role does" in said
    assert main(["annotate", "users", "role", p, "ada", "annotator"]) == 0  # rob is admin now

    kinds = query(
        project,
        "SELECT i.kind, COUNT(*) FROM work w JOIN items i ON i.id = w.item_id JOIN users u "
        "ON u.id = w.user_id WHERE u.name = 'rita' GROUP BY i.kind ORDER BY i.kind",
    )
    assert [k for k, _ in kinds] == ["caption", "qa"]  # reviewers write captions too
    counts = ", ".join(f"{k} {n}" for k, n in kinds)
    conn = project.connect()
    try:  # one live session, one expired: one ends
        auth.open_session(conn, accounts(project)["rita"])
        conn.execute(
            "INSERT INTO sessions (token, user_id, csrf, created, expires) VALUES "
            "('old', ?, 'x', 0, 1)",
            (accounts(project)["rita"].id,),
        )
    finally:
        conn.close()
    assert main(["annotate", "users", "remove", p, "rita"]) == 0
    said = capsys.readouterr().out
    assert "removed rita: 1 session ended" in said
    assert not query(
        project, "SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.name = 'rita'"
    )
    total = sum(n for _, n in kinds)
    assert f"{total} unfinished pieces of work back in the pool ({counts})" in said
    assert f"vidbench annotate assign {p} qa" in said
    assert f"vidbench annotate assign {p} caption" in said
    assert main(["annotate", "users", "list", p]) == 0
    listed = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert listed["rita"][1:3] == ["reviewer", "removed"] and len(listed["rob"]) == 2
    assert listed["ada"][1] == "annotator"
    # removed is final for the name (the history names it), and says so
    assert main(["annotate", "users", "remove", p, "rita"]) == 2
    assert "was removed at" in capsys.readouterr().err
    assert main(["annotate", "users", "role", p, "rita", "admin"]) == 2
    assert main(["annotate", "users", "add", p, "rita", "--role", "reviewer"]) == 2
    assert "choose another name" in capsys.readouterr().err


def test_a_removed_reviewers_work_submitted_stays_and_open_work_goes_to_others(
    qa_release: Path, tmp_path: Path
) -> None:
    project = make_project(qa_release, tmp_path)
    (done_id, done_item), *rest = _qa_reviews(project, "rita")
    open_items = [item for _, item in rest]
    assert open_items
    review = {"decision": "accept", "note": ""}
    _save(project, done_id, "rita", json.dumps(review), "submitted")
    _save(project, rest[0][0], "rita", json.dumps(review), "draft")  # a draft: unfinished

    conn = project.connect()
    try:
        removed = auth.remove_user(conn, "rita", "test")
        assert removed.released["qa"] == len(rest)  # the submitted review is not released
        assert auth.check_password(conn, "rita", PASSWORD) is None
        # the open items are nobody's now: listed as not assigned, not "pending (rita)" forever
        exported = exports.export_kind(project, conn, "qa", "test", None, "4dbench", ADAPTERS)
        assert not [why for why in exported.left_out if "rita" in why]
        nobodys = [why for why in exported.left_out if why.endswith("not assigned to anyone")]
        assert nobodys == [f"{item}: not assigned to anyone" for item in open_items]
        planned = assign.plan(conn, "qa")
        assert {item for item, _, _ in planned.rows} == set(open_items)  # only the released ones
        names = {s.name for s in planned.shares}
        assert "rita" not in names  # a removed person gets no work
        assign.apply(conn, planned, "test")
        assert assign.plan(conn, "qa").added == 0
        # the admin's progress: her submitted review, counted under "removed"; nothing open
        hers = [p for p in progress.per_person(conn) if p.name == "rita"]
        assert [(p.role, p.job, p.total, p.done) for p in hers if p.job == "review"] == [
            ("reviewer, removed", "review", 1, 1)
        ]
    finally:
        conn.close()
    holders = query(
        project,
        "SELECT w.item_id, u.name, w.status, w.content FROM work w JOIN users u "
        "ON u.id = w.user_id WHERE w.job = 'review'",
    )
    rita = {r[0]: (r[2], r[3]) for r in holders if r[1] == "rita"}
    assert rita[done_item][0] == "submitted"  # kept, under her name
    assert rita[rest[0][1]] == (db.RELEASED, json.dumps(review))  # the draft's text is kept
    for item in open_items:
        assert [r[1] for r in holders if r[0] == item and r[1] != "rita"] == ["rob"]


@pytest.mark.slow
def test_a_removed_persons_browser_signs_in_again_and_a_demoted_admin_loses_the_admin_page(
    qa_release: Path, tmp_path: Path, web: Web
) -> None:
    project = make_project(qa_release, tmp_path)
    base = web.serve(create_app(project, ADAPTERS))
    rita, ada = web.open(), web.open()
    sign_in_page(rita, base, "rita")
    sign_in_page(ada, base, "ada")
    ada.goto(f"{base}/admin")
    expect(ada.locator("form[data-admin-assign]")).to_have_count(1)

    conn = project.connect()
    try:
        assert auth.remove_user(conn, "rita", "test").sessions == 1
        auth.set_role(conn, "rob", "admin", "test")
        auth.set_role(conn, "ada", "reviewer", "test")
    finally:
        conn.close()
    web.watch.allow(r"status of 403")  # the admin page, refused to the demoted admin
    rita.reload()  # the removed person's next request: the sign-in page, nothing of theirs
    expect(rita).to_have_url(f"{base}/login")
    ada.reload()
    expect(ada.locator("body")).to_contain_text("admins only")
    ada.goto(f"{base}/")
    expect(ada.locator("a[href='/admin']")).to_have_count(0)
    # and signing in again does not work for the removed person
    rita.fill("input[name=name]", "rita")
    rita.fill("input[name=password]", PASSWORD)
    rita.click("button[type=submit]")
    expect(rita).to_have_url(re.compile(r"/login"))


def test_a_new_role_gives_back_the_unfinished_work_it_is_not_given(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reviewer made annotator keeps their captions but no longer reviews: their unfinished QA
    reviews go back to the pool, counted, and `assign` gives them to a reviewer."""
    project = make_project(qa_release, tmp_path)
    reviews = _qa_reviews(project, "rob")
    (done_id, _), *rest = reviews
    _save(project, done_id, "rob", json.dumps({"decision": "accept", "note": ""}), "submitted")
    capsys.readouterr()
    assert main(["annotate", "users", "role", str(project.path), "rob", "annotator"]) == 0
    said = capsys.readouterr().out
    assert f"{len(rest)} unfinished pieces of work back in the pool (qa {len(rest)})" in said
    statuses = query(
        project,
        "SELECT w.job, w.status FROM work w JOIN users u ON u.id = w.user_id WHERE u.name = 'rob'",
    )
    assert {s for job, s in statuses if job == "write"} == {"todo"}  # captions stay his
    assert sorted(s for job, s in statuses if job == "review") == ["released"] * len(rest) + [
        "submitted"
    ]
    conn = project.connect()
    try:
        # what he gave back is not his any more: not listed, not saved (it would hold the item)
        rob = auth.check_password(conn, "rob", PASSWORD)
        assert rob is not None and rob.role == "annotator"
        assert [w["id"] for w in work.mine(conn, rob, "review")] == [done_id]
        with pytest.raises(work.NoSuchWork):
            work.save(conn, rest[0][0], rob, 0, json.dumps({"decision": "reject"}), "submitted")
        assert assign.assign(conn, "qa", None, "test") == len(rest)  # all to rita, the reviewer
    finally:
        conn.close()


def test_work_given_back_on_a_role_change_is_theirs_again_when_assigned_back(
    qa_release: Path, tmp_path: Path
) -> None:
    project = make_project(qa_release, tmp_path)
    reviews = _qa_reviews(project, "rob")
    _save(project, reviews[0][0], "rob", json.dumps({"decision": "accept", "note": ""}), "draft")
    conn = project.connect()
    try:
        auth.set_role(conn, "rob", "annotator", "test")
        auth.set_role(conn, "rob", "reviewer", "test")  # a mistake, undone
        planned = assign.plan(conn, "qa")
        assert assign.apply(conn, planned, "test") == planned.added > 0
        assert assign.plan(conn, "qa").added == 0  # every item covered (not planned forever)
    finally:
        conn.close()
    # the least loaded reviewer is rob (he gave all back): his draft is his again, with its text
    mine = query(
        project,
        "SELECT w.id, w.status, w.content FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE u.name = 'rob' AND w.job = 'review' ORDER BY w.item_id",
    )
    assert [(r[0], r[1]) for r in mine] == [(reviews[0][0], "draft")] + [
        (i, "todo") for i, _ in reviews[1:]
    ]
    assert json.loads(mine[0][2])["decision"] == "accept"
    # given back and given again are in the work's history, as saves are (the command line's
    # author is no account: the revisions name rob, whose work it is)
    history = query(
        project,
        "SELECT r.version, r.status, u.name FROM revisions r JOIN users u ON u.id = r.author "
        "WHERE r.work_id = ? ORDER BY r.version",
        (reviews[0][0],),
    )
    assert [tuple(r) for r in history] == [
        (1, "draft", "rob"), (2, "released", "rob"), (3, "draft", "rob")
    ]  # fmt: skip
    untouched = query(project, "SELECT status FROM revisions WHERE work_id = ?", (mine[1][0],))
    assert [r[0] for r in untouched] == ["released", "todo"]


def test_a_project_from_before_accounts_could_be_removed_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    project = Project.init(tmp_path / "project", tmp_path / "data")
    conn = project.connect()
    auth.add_user(conn, "ann1", "annotator", PASSWORD)
    conn.execute("ALTER TABLE users DROP COLUMN removed")  # the schema of earlier versions
    conn.close()
    assert main(["annotate", "users", "remove", str(project.path), "ann1"]) == 0
    assert "removed ann1" in capsys.readouterr().out


def test_a_removed_red_teamers_attacks_and_versions_stay_theirs_for_the_next(
    tmp_path: Path,
) -> None:
    """What someone red-teamed belongs to the rule: after they are removed, the next person
    given the rule sees their attacks and revised rule, named and marked removed, and goes on
    from them (the attack not yet checked is still to check)."""
    import shutil

    from fastapi.testclient import TestClient

    from annotate_support import sign_in
    from conftest import AUTOEVAL
    from vidbench.annotate import redteam_store
    from vidbench.annotate.folder import import_folder

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(AUTOEVAL / "AUTO-EVAL-VIDEO.json", data / "AUTO-EVAL-VIDEO.json")
    project = Project.init(tmp_path / "project", data)
    conn = project.connect()
    import_folder(conn, data, "ada", ADAPTERS)
    for name, role in (("red", "annotator"), ("ada", "admin")):
        auth.add_user(conn, name, role, PASSWORD)
    assign.assign(conn, "rule", 1, "ada")
    ref = conn.execute("SELECT ref FROM items WHERE kind = 'rule' ORDER BY ref LIMIT 1").fetchone()
    engine = ADAPTERS.red_team
    redteam_store.attack(project, engine, conn, ref[0], "A sneaky answer.", 0, "red")
    rule = "A tighter rule.\n[Answer to be judged]:\n"
    redteam_store.revise(project, engine, conn, ref[0], rule, "closes it", "red")
    auth.remove_user(conn, "red", "ada")
    auth.add_user(conn, "blue", "annotator", PASSWORD)
    assign.assign(conn, "rule", 1, "ada")
    conn.close()
    (blues,) = query(
        project,
        "SELECT w.id FROM work w JOIN items i ON i.id = w.item_id JOIN users u "
        "ON u.id = w.user_id WHERE u.name = 'blue' AND i.ref = ?",
        (ref[0],),
    )
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "blue")
    page = client.get(f"/work/{blues[0]}")
    assert page.status_code == 200, page.text[:300]
    assert "A sneaky answer." in page.text and "A tighter rule." in page.text
    assert page.text.count("by red (removed)") == 2  # the attack, the current rule
    assert ">unchecked<" in page.text  # their attack is still to check


def test_a_reviewer_sees_work_given_back_in_the_items_history(
    qa_release: Path, tmp_path: Path
) -> None:
    """rob, made annotator by ada, gives back his QA reviews; rita, given one, sees on its page
    that rob had it and ada gave it back; a writer sees only their own work's history."""
    from fastapi.testclient import TestClient

    from annotate_support import sign_in

    project = make_project(qa_release, tmp_path)
    (rob_id, item), *_ = _qa_reviews(project, "rob")
    _save(project, rob_id, "rob", json.dumps({"decision": "accept", "note": ""}), "draft")
    conn = project.connect()
    try:
        auth.set_role(conn, "rob", "annotator", "ada")
        assign.assign(conn, "qa", None, "ada")
    finally:
        conn.close()
    (ritas,) = query(
        project,
        "SELECT w.id FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE u.name = 'rita' AND w.item_id = ?",
        (item,),
    )
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "rita")
    page = client.get(f"/work/{ritas[0]}").text
    steps = re.findall(r'<tr data-step="(\w+)">.*?"work of">(\w+)<.*?"by">(\w+)<', page)
    assert steps == [("draft", "rob", "rob"), ("released", "rob", "ada")]
    assert '"decision"' not in page.split("data-history")[1].split("</details>")[0]

    writer = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(writer, "ann1")
    (captions,) = query(
        project,
        "SELECT w.id FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE u.name = 'ann1' AND w.job = 'write' LIMIT 1",
    )
    _save(project, captions[0], "ann1", "A cube.", "draft")
    own = writer.get(f"/work/{captions[0]}").text
    assert re.findall(r'<tr data-step="(\w+)">.*?"work of">(\w+)<', own) == [("draft", "ann1")]
