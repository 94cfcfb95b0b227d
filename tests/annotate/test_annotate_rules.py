"""What the annotation app accepts and what it writes: only written work is reviewed (no empty
caption is accepted or exported), names never become paths outside the exports folder, items
nobody was given are listed as left out of every export, the admin's per-task progress shows its
numbers, a non-UTF-8 line of a review queue is named and skipped, and a save refused by a
concurrent one keeps its text until its author restores or discards it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from annotate_support import (
    ADAPTERS,
    PASSWORD,
    accounts,
    make_project,
    qa_candidate,
    query,
    sign_in,
    work_ids,
    writers,
)
from vidbench.annotate import auth, exports, work
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.annotate.web.deps import Signed
from vidbench.benchmarks.fourd.review.items import import_queue
from vidbench.cli import main
from vidbench.core.errors import ConfigError, DataError

UID0, UID1 = "0" * 32, f"{1:032x}"
GOOD = {k: v for k, v in qa_candidate(UID0, "").items() if k != "id"}


@pytest.fixture
def project(qa_release: Path, tmp_path: Path) -> Project:
    return make_project(qa_release, tmp_path)


@pytest.fixture(scope="module")
def unchanged(qa_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project the tests only read (or are refused to change)."""
    return make_project(qa_release, tmp_path_factory.mktemp("annotate_rules"))


def _client(project: Project, name: str) -> tuple[TestClient, dict[str, str]]:
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    return client, {"X-CSRF-Token": sign_in(client, name)}


def test_only_written_work_can_be_reviewed(project: Project) -> None:
    (todo, _), (draft, draft_owner), (done, done_owner) = writers(project, UID0)[:3]
    people = accounts(project)
    conn = project.connect()
    work.save(conn, draft, people[draft_owner], 0, "half a capt")
    work.save(conn, done, people[done_owner], 0, "A cube spins.", "submitted")
    conn.close()
    client, headers = _client(project, "rita")
    for work_id, version in ((todo, 0), (draft, 1)):
        accepted = client.post(
            f"/api/work/{work_id}", json={"version": version, "status": "accepted"}, headers=headers
        )
        assert accepted.status_code == 422, accepted.text
        assert "only written work can be reviewed" in accepted.json()["error"]
        sent_back = client.post(
            f"/api/work/{work_id}",
            json={"version": version, "status": "returned", "comment": "write it"},
            headers=headers,
        )
        assert sent_back.status_code == 422
    assert query(project, "SELECT status FROM work WHERE id = ?", (todo,))[0][0] == "todo"
    ok = client.post(
        f"/api/work/{done}", json={"version": 1, "status": "accepted"}, headers=headers
    )
    assert ok.status_code == 200 and ok.json()["status"] == "accepted"
    again = client.post(
        f"/api/work/{done}",
        json={"version": 2, "status": "returned", "comment": "which way?"},
        headers=headers,
    )
    assert again.status_code == 200  # an accepted caption can still be sent back
    returned = client.post(
        f"/api/work/{done}", json={"version": 3, "status": "accepted"}, headers=headers
    )
    assert returned.status_code == 422  # sent back: it waits for its writer


def test_nothing_empty_is_submitted_or_exported(project: Project) -> None:
    people = accounts(project)
    review = work_ids(project, "rita", "review")[0]
    conn = project.connect()
    with pytest.raises(DataError, match="choose accept, edit or reject"):
        work.save(conn, review, people["rita"], 0, "", "submitted")
    # a database from before these rules may hold an accepted empty caption: it is left out
    first = writers(project, UID0)
    for n, (work_id, name) in enumerate(first):
        work.save(conn, work_id, people[name], 0, f"caption {n}", "submitted")
    conn.execute("UPDATE work SET content = '', status = 'accepted' WHERE id = ?", (first[0][0],))
    done = exports.export_kind(project, conn, "captions", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    assert done.written == 0
    assert f"caption:{UID0}: {first[0][1]}'s caption is empty" in done.left_out
    assert ",," not in done.path.read_text("utf-8")


@pytest.mark.parametrize(
    "name",
    ["x/../../../../elsewhere/pwned", "../up", ".hidden", "a\\b", "nul\x00", "", "a" * 65, "a b"],
)
def test_user_names_that_are_not_file_names_are_refused(unchanged: Project, name: str) -> None:
    conn = unchanged.connect()
    try:
        with pytest.raises(ConfigError, match="user name"):
            auth.add_user(conn, name, "annotator", PASSWORD)
    finally:
        conn.close()


def test_the_answers_export_of_any_name_stays_in_the_exports_folder(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    name = "x/../../../../elsewhere/pwned"
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    args = ["annotate", "users", "add", str(project.path), name, "--role", "annotator"]
    assert main([*args, "--password-stdin"]) == 2
    assert "user name" in capsys.readouterr().err
    # a name written by an older version (no check then) still cannot lead out
    conn = project.connect()
    conn.execute(
        "INSERT INTO users (name, role, pw_hash, created) VALUES (?, 'annotator', 'x', 'then')",
        (name,),
    )
    conn.close()
    assert main(["annotate", "export", str(project.path), "answers", "--user", name]) == 3  # none
    written = list((project.path / "exports").iterdir())
    assert len(written) == 1 and written[0].name.startswith("4dbench-x_")
    assert written[0].parent == project.path / "exports"
    escaped = (project.path / "exports" / f"4dbench-{name}.jsonl").resolve()
    assert not escaped.exists(), escaped  # where the old code wrote it


def test_an_import_that_finds_nothing_says_so(
    unchanged: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty or cut-short file, a file of another kind, a path to nothing, an empty folder:
    named by path, never a bare "0 items added" as if all had come in."""
    empty = tmp_path / "review_queue.jsonl"
    empty.write_text("")
    project = str(unchanged.path)
    for args, said in [
        (["queue", str(empty)], f"{empty}: nothing for the queue importer (empty, or not"),
        (["4dbench", str(empty)], f"{empty}: nothing for the 4dbench importer"),
        (["4dbench", str(tmp_path / "gone")], "nothing for the 4dbench importer (nothing there)"),
        (["folder", str(tmp_path)], f"{tmp_path}: nothing an importer reads (queue, 4dbench"),
    ]:
        assert main(["annotate", "import", project, *args]) == 0
        captured = capsys.readouterr()
        assert "0 items added" in captured.out
        assert "".join(said.split()) in "".join(captured.err.split()), args  # wrapped anywhere
    client, headers = _client(unchanged, "ada")
    upload = client.post("/api/admin/import", files={"file": ("half.jsonl", b"")}, headers=headers)
    assert upload.status_code == 200 and upload.json()["added"] == 0
    (problem,) = upload.json()["problems"]
    assert problem.endswith(
        "-half.jsonl: nothing for the queue importer (empty, or not what it reads)"
    )


def test_a_long_question_can_be_edited(project: Project, tmp_path: Path) -> None:
    """An edit carries the whole record: a question of 10,000 characters is edited and exported
    like any other, where every save over 5,000 characters was refused."""
    queue = tmp_path / "review_queue.jsonl"
    long = "How many " + "very " * 2000 + "red cubes are there?"
    queue.write_text(json.dumps(qa_candidate(UID1, "long", long)) + "\n")
    conn = project.connect()
    assert import_queue(conn, project.data, queue, "ada").added == 1
    conn.close()
    client, headers = _client(project, "ada")
    assert client.post("/api/admin/assign", json={"kind": "qa"}, headers=headers).status_code == 200
    (mine,) = query(project, "SELECT id, user_id FROM work WHERE item_id = ?", (f"qa:{UID1}_long",))
    name = next(u.name for u in accounts(project).values() if u.id == mine[1])
    reviewer, headers = _client(project, name)
    record = json.loads(
        query(project, "SELECT data FROM items WHERE id = ?", (f"qa:{UID1}_long",))[0][0]
    )
    edited = {**record, "Question": long.replace("red", "blue")}
    review = {"decision": "edit", "reason": "", "edited": edited}
    body = {"version": 0, "content": json.dumps(review), "status": "submitted"}
    saved = reviewer.post(f"/api/work/{mine[0]}", json=body, headers=headers)
    assert saved.status_code == 200, saved.text
    conn = project.connect()
    done = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    assert json.loads(done.path.read_text())[f"{UID1}_long"]["Question"].endswith(
        "blue cubes are there?"
    )
    too_long = {**body, "version": 1, "content": json.dumps({**review, "reason": "x" * 20000})}
    refused = reviewer.post(f"/api/work/{mine[0]}", json=too_long, headers=headers)
    assert refused.status_code == 422 and refused.json()["error"].startswith("too long: ")


def test_a_whole_question_pasted_into_the_search_finds_it(project: Project, tmp_path: Path) -> None:
    queue = tmp_path / "review_queue.jsonl"
    question = "In the eighth view, " + "as the object turns slowly, " * 12 + "what colour is it?"
    assert len(question) > 300
    queue.write_text(json.dumps(qa_candidate(UID1, "pasted", question)) + "\n")
    conn = project.connect()
    assert import_queue(conn, project.data, queue, "ada").added == 1
    conn.close()
    client, headers = _client(project, "ada")
    assert client.post("/api/admin/assign", json={"kind": "qa"}, headers=headers).status_code == 200
    (owner,) = query(
        project, "SELECT u.name FROM work w JOIN users u ON u.id = w.user_id WHERE w.item_id = ?",
        (f"qa:{UID1}_pasted",),
    )  # fmt: skip
    reviewer, _ = _client(project, owner[0])
    found = reviewer.get("/", params={"q": question})
    assert found.status_code == 200, found.text[:300]
    assert found.text.count("data-work-row") == 1 and f"{UID1}_pasted" in found.text
    assert 'maxlength="2000"' in found.text  # the box takes what the server reads
    assert reviewer.get("/", params={"q": "x" * 2001}).status_code == 422


def test_a_project_moved_while_serving_is_a_503_to_retry(project: Project) -> None:
    """The database cannot be opened any more (the folder moved while the app serves it; so
    too a read-only folder or a full disk): 503 with Retry-After, which the pages retry
    keeping the text, never a traceback."""
    client, headers = _client(project, "ann1")
    mine = work_ids(project, "ann1", "write")[0]
    moved = project.path.with_name("moved")
    project.path.rename(moved)
    try:
        page = client.get(f"/work/{mine}")
        saved = client.post(
            f"/api/work/{mine}", json={"version": 0, "content": "x"}, headers=headers
        )
        # a server that had not opened it yet: refused before the body is read (limits.py)
        fresh = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
        fresh.cookies.update(client.cookies)
        checked = fresh.post(f"/api/work/{mine}", json={"version": 0}, headers=headers)
    finally:
        moved.rename(project.path)
    assert page.status_code == 503 and "annotate serve" in page.text
    for answer in (saved, checked):
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
        assert answer.json()["error"].startswith(f"the project's database {project.database}")


def test_a_database_cut_short_is_a_503_and_a_bug_a_logged_500(
    project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    """Only what says the database cannot be used now is a 503 to retry: a file that is no
    longer SQLite's (a copy cut short) too. A statement SQLite cannot run is the code's bug: a
    500 with its traceback in the log, not a 503 blaming the database (which sends whoever runs
    the app looking at a disk that is fine, and logs nothing to find the bug by)."""
    app = create_app(project, ADAPTERS)

    @app.get("/api/bug")
    def bug(v: Signed) -> None:
        v.conn.execute("SELEC 1")  # malformed SQL: sqlite3.OperationalError, SQLITE_ERROR

    client = TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    headers = {"X-CSRF-Token": sign_in(client, "ann1")}
    with caplog.at_level("ERROR"):
        broken = client.get("/api/bug")
    assert broken.status_code == 500 and "retry-after" not in broken.headers
    assert "OperationalError" in broken.json()["error"]
    assert any(r.exc_info and "SELEC" in str(r.exc_info[1]) for r in caplog.records)

    mine = work_ids(project, "ann1", "write")[0]
    for leftover in project.path.glob(f"{project.database.name}-*"):  # -wal, -shm
        leftover.unlink()
    project.database.write_bytes(b"not a database" * 512)
    checked = client.post(f"/api/work/{mine}", json={"version": 0}, headers=headers)  # limits.py
    page = client.get(f"/work/{mine}")
    assert checked.status_code == 503 and checked.headers["retry-after"] == "5"
    assert "file is not a database" in checked.json()["error"]
    assert page.status_code == 503 and "file is not a database" in page.text


def test_unassigned_items_are_listed_as_left_out(project: Project) -> None:
    queue = project.path / "extra.jsonl"
    queue.write_text(json.dumps({**GOOD, "id": f"{UID0}_extra"}) + "\n")
    conn = project.connect()
    import_queue(conn, project.data, queue, "ada")  # imported, never assigned
    qa = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    captions = exports.export_kind(project, conn, "captions", "ada", None, "4dbench", ADAPTERS)
    answers = exports.export_kind(project, conn, "answers", "ada", "ann1", "4dbench", ADAPTERS)
    conn.close()
    assert f"qa:{UID0}_extra: not assigned to anyone" in qa.left_out
    # no human-baseline question was assigned: each is named
    assert f"{UID0}_appearance: not assigned to anyone" in answers.left_out
    assert len([w for w in answers.left_out if "not assigned" in w]) == 20
    assert not [w for w in captions.left_out if "not assigned" in w]  # all given to writers


def test_the_admin_sees_the_numbers_per_task(unchanged: Project) -> None:
    client, _ = _client(unchanged, "ada")
    page = client.get("/admin").text
    assert "built-in method" not in page
    row = page.split('<tr data-task="qa">')[1].split("</tr>")[0]
    # 20 QA items, none withdrawn, all 20 assigned, none done, and the bar of what is done
    assert row == (
        '<td>qa</td><td data-label="items">20</td><td data-label="withdrawn">0</td>'
        '<td data-label="not assigned">0</td><td data-label="assigned">20</td>'
        '<td data-label="done">0</td>\n'
        '<td><progress max="20" value="0" aria-label="qa done"></progress> 0%</td>'
    )


def test_a_non_utf8_line_in_the_queue_is_named_and_skipped(tmp_path: Path, capsys) -> None:
    from conftest import make_qa_dataset

    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    lines = [
        json.dumps({**GOOD, "id": f"{UID0}_one"}).encode(),
        b'{"id": "caf\xe9"}',  # Latin-1, not UTF-8
        json.dumps({**GOOD, "id": f"{UID0}_two\u2028"}, ensure_ascii=False).encode(),
        b'{"id": "\\ud800"}',  # an unpaired surrogate escape: no text to store
        json.dumps({**GOOD, "id": f"{UID0}_three"}).encode(),
    ]
    (data / "review_queue.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    project = tmp_path / "project"
    assert main(["annotate", "init", str(project), "--data", str(data)]) == 0
    err = capsys.readouterr().err
    assert "line 2: not UTF-8 text (byte 12)" in err
    assert "line 4: an unpaired surrogate" in err
    ids = {r[0] for r in query(Project.open(project), "SELECT id FROM items WHERE kind = 'qa'")}
    assert {f"qa:{UID0}_one", f"qa:{UID0}_two\u2028", f"qa:{UID0}_three"} <= ids


def test_a_refused_save_is_kept_until_restored_or_discarded(project: Project) -> None:
    mine = work_ids(project, "ann1", "write")[0]
    tab1, headers = _client(project, "ann1")
    url = f"/api/work/{mine}"
    assert tab1.post(url, json={"version": 0, "content": "first"}, headers=headers).is_success
    # a tab that loaded version 0 and was closed right after typing: its save is refused
    stale = tab1.post(
        url, json={"version": 0, "content": "typed in the closed tab"}, headers=headers
    )
    assert stale.status_code == 409 and stale.json()["kept"]
    again = tab1.post(url, json={"version": 0, "content": "typed later still"}, headers=headers)
    assert again.json()["kept"] == stale.json()["kept"]  # one kept text per tab, the latest
    page = tab1.get(f"/work/{mine}").text
    assert f'data-kept="{stale.json()["kept"]}"' in page and "typed later still" in page
    # nobody else sees or discards it
    other, other_headers = _client(project, "ann2")
    assert (
        "typed later still" not in other.get(f"/work/{work_ids(project, 'ann2', 'write')[0]}").text
    )
    refused = other.post(f"{url}/kept/{stale.json()['kept']}/discard", headers=other_headers)
    assert refused.status_code == 404
    # restoring saves it over the current version and settles it
    restored = tab1.post(
        url,
        json={"version": 1, "content": "typed later still", "resolves": [stale.json()["kept"]]},
        headers=headers,
    )
    assert restored.status_code == 200
    assert "data-kept=" not in tab1.get(f"/work/{mine}").text
    # a second refused save, discarded by its author, stays in the table, resolved
    late = tab1.post(url, json={"version": 1, "content": "one more"}, headers=headers).json()
    discarded = tab1.post(f"{url}/kept/{late['kept']}/discard", headers=headers)
    assert discarded.status_code == 200
    assert "data-kept=" not in tab1.get(f"/work/{mine}").text
    rows = query(project, "SELECT content, resolved IS NOT NULL FROM conflicts ORDER BY id")
    assert [tuple(r) for r in rows] == [("typed later still", 1), ("one more", 1)]
