"""The annotation app's safety rules through the real FastAPI app: sign-in, CSRF, who may read
and write what, media paths, escaping, and optimistic concurrency (409 with the other version)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, make_project, qa_candidate, query, sign_in, work_ids
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app

UID0 = "0" * 32


@pytest.fixture(scope="module")
def project(qa_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(qa_release, tmp_path_factory.mktemp("annotate_security"))


@pytest.fixture
def client(project: Project) -> TestClient:
    return TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")


def test_unauthenticated_requests_are_refused(client: TestClient) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"
    assert client.get("/admin", follow_redirects=False).status_code == 303
    assert client.get("/api/work/1").status_code == 401
    assert client.post("/api/work/1", json={"version": 0, "content": "x"}).status_code == 401
    assert client.get(f"/media/4D_Object_Question_Answering/data/{UID0}.mp4").status_code == 401
    assert client.post("/api/admin/export", json={"kind": "captions"}).status_code == 401


def test_wrong_password_and_forged_login_are_refused(client: TestClient) -> None:
    page = client.get("/login")
    assert "csrf" in page.text
    forged = client.post("/login", data={"name": "ada", "password": "x", "csrf": "forged"})
    assert forged.status_code == 403
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
    wrong = client.post(
        "/login",
        data={"name": "ada", "password": "wrong password", "csrf": token},
        follow_redirects=False,
    )
    assert "error=" in wrong.headers["location"]
    assert client.get("/api/work/1").status_code == 401


def test_a_post_without_the_csrf_token_is_refused(project: Project, client: TestClient) -> None:
    csrf = sign_in(client, "ann1")
    mine = work_ids(project, "ann1", "write")[0]
    body = {"version": 0, "content": "forged caption"}
    assert client.post(f"/api/work/{mine}", json=body).status_code == 403
    refused = client.post(f"/api/work/{mine}", json=body, headers={"X-CSRF-Token": "x" + csrf})
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]
    assert query(project, "SELECT content FROM work WHERE id = ?", (mine,))[0][0] == ""


def test_an_annotator_cannot_reach_another_persons_work(
    project: Project, client: TestClient
) -> None:
    csrf = sign_in(client, "ann1")
    theirs = work_ids(project, "ann2", "write")[0]
    headers = {"X-CSRF-Token": csrf}
    assert client.get(f"/api/work/{theirs}").status_code == 404
    assert client.get(f"/work/{theirs}").status_code == 404
    written = client.post(
        f"/api/work/{theirs}", json={"version": 0, "content": "mine now"}, headers=headers
    )
    assert written.status_code == 404
    assert query(project, "SELECT content, version FROM work WHERE id = ?", (theirs,))[0][0] == ""
    review = work_ids(project, "rita", "review")[0]
    assert client.get(f"/api/work/{review}").status_code == 404
    assert client.get("/admin").status_code == 403
    exported = client.post("/api/admin/export", json={"kind": "captions"}, headers=headers)
    assert exported.status_code == 403


def test_caption_writers_do_not_see_each_others_captions(
    project: Project, client: TestClient
) -> None:
    ids = {name: work_ids(project, name, "write")[0] for name in ("ann3", "ann4")}
    csrf = sign_in(client, "ann3")
    saved = client.post(
        f"/api/work/{ids['ann3']}",
        json={"version": 0, "content": "a red cube spinning slowly"},
        headers={"X-CSRF-Token": csrf},
    )
    assert saved.status_code == 200 and saved.json()["version"] == 1
    other = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(other, "ann4")
    page = other.get(f"/work/{ids['ann4']}")
    assert page.status_code == 200 and "red cube spinning" not in page.text
    assert "red cube spinning" not in other.get(f"/api/work/{ids['ann4']}").text


@pytest.mark.parametrize(
    "rel",
    [
        "..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "4D_Object_Question_Answering/data/..%2F..%2F..%2Fproject%2Fannotate.sqlite",
        "4D_Object_Question_Answering/data/4d_qa.json",
        "C:%5Cwindows%5Cwin.ini",
    ],
)
def test_media_paths_outside_the_data_folder_are_refused(client: TestClient, rel: str) -> None:
    sign_in(client, "ann1")
    answer = client.get(f"/media/{rel}")
    assert answer.status_code == 400, answer.text
    assert "passwd" not in answer.text and "root:" not in answer.text


def test_media_serves_project_videos_and_names_a_missing_one(client: TestClient) -> None:
    sign_in(client, "ann1")
    base = f"/media/4D_Object_Question_Answering/data/4d_object_multi_view_videos/{UID0}"
    video = client.get(f"{base}/view_0_rgb_white_bg.mp4")
    assert video.status_code == 200 and video.content[4:8] == b"ftyp"
    missing = client.get(f"{base}/view_99_rgb_white_bg.mp4")
    assert missing.status_code == 404
    assert "missing video" in missing.json()["error"]


def test_script_in_a_caption_is_shown_as_text(project: Project, client: TestClient) -> None:
    mine = work_ids(project, "ann5", "write")[0]
    csrf = sign_in(client, "ann5")
    attack = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    version = query(project, "SELECT version FROM work WHERE id = ?", (mine,))[0][0]
    saved = client.post(
        f"/api/work/{mine}",
        json={"version": version, "content": attack, "status": "submitted"},
        headers={"X-CSRF-Token": csrf},
    )
    assert saved.status_code == 200, saved.text
    own = client.get(f"/work/{mine}")
    reviewer = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(reviewer, "rita")
    review = reviewer.get("/review/captions")
    for page in (own, review):
        assert "&lt;script&gt;alert(" in page.text
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]


def test_two_saves_crossing_give_a_conflict_and_lose_nothing(
    project: Project, client: TestClient
) -> None:
    mine = work_ids(project, "ann6", "write")[0]
    csrf = sign_in(client, "ann6")
    headers = {"X-CSRF-Token": csrf}
    first = client.post(
        f"/api/work/{mine}", json={"version": 0, "content": "tab one"}, headers=headers
    )
    assert first.status_code == 200 and first.json()["version"] == 1
    stale = client.post(
        f"/api/work/{mine}", json={"version": 0, "content": "tab two"}, headers=headers
    )
    assert stale.status_code == 409
    body = stale.json()
    assert "conflict" in body["error"] and "ann6" in body["error"]
    assert body["current"]["content"] == "tab one" and body["current"]["version"] == 1
    # a reviewer's decision on a draft is refused without showing the draft, and the owner's
    # newer save goes through
    reviewer = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    rcsrf = sign_in(reviewer, "rob")
    sent_back = reviewer.post(
        f"/api/work/{mine}",
        json={"version": 0, "status": "returned", "comment": "too short"},
        headers={"X-CSRF-Token": rcsrf},
    )
    assert sent_back.status_code == 422 and "tab one" not in sent_back.text
    assert "only written work can be reviewed" in sent_back.json()["error"]
    again = client.post(
        f"/api/work/{mine}", json={"version": 1, "content": "tab two"}, headers=headers
    )
    assert again.status_code == 200 and again.json()["version"] == 2
    rows = query(
        project,
        "SELECT r.version, r.content, u.name, r.at FROM revisions r JOIN users u "
        "ON u.id = r.author WHERE r.work_id = ? ORDER BY r.version",
        (mine,),
    )
    assert [(r[0], r[1], r[2]) for r in rows] == [(1, "tab one", "ann6"), (2, "tab two", "ann6")]
    assert all(r[3].startswith("20") for r in rows)  # every write has its time


def test_malformed_uploads_are_named_and_kept(project: Project, client: TestClient) -> None:
    csrf = sign_in(client, "ada")
    headers = {"X-CSRF-Token": csrf}
    binary = client.post(
        "/api/admin/import",
        files={"file": ("queue.jsonl", b"\xff\xfe not text", "application/octet-stream")},
        headers=headers,
    )
    assert binary.status_code == 200 and binary.json()["added"] == 0
    assert binary.json()["problems"] == [
        f"{next((project.path / 'uploads').glob('*-queue.jsonl'))} line 1: not UTF-8 text (byte 1)"
    ]
    options = ["(A) 1", "(B) 2", "(C) 3", "(D) 4"]
    good = qa_candidate(UID0, "upload", "How many?", options, 2, "Object Counting")
    text = f'{{"id": 1}}\n{json.dumps(good)}\n[broken\n'.encode()
    mixed = client.post(
        "/api/admin/import", files={"file": ("../../evil.jsonl", text)}, headers=headers
    )
    assert mixed.status_code == 200
    body = mixed.json()
    assert body["added"] == 1 and len(body["problems"]) == 2
    assert "line 1" in body["problems"][0] and "line 3" in body["problems"][1]
    kept = sorted(p.name for p in (project.path / "uploads").iterdir())
    assert kept[-1].endswith("-evil.jsonl")  # kept inside the project, never where it asked
    assert not (project.path.parent / "evil.jsonl").exists()
    # an upload refused as a whole is not kept
    unknown = client.post(
        "/api/admin/import?kind=nonsense", files={"file": ("other.jsonl", text)}, headers=headers
    )
    assert unknown.status_code == 422 and "no importer 'nonsense'" in unknown.json()["error"]
    assert sorted(p.name for p in (project.path / "uploads").iterdir()) == kept
    # a name longer than a file system takes (255 bytes): kept under a shorter one, imported
    for name in ("q" * 300, "\U00020000" * 70):  # 4-byte letters: 280 bytes in 70 characters
        long = client.post(
            "/api/admin/import", files={"file": (f"{name}.jsonl", text)}, headers=headers
        )
        assert long.status_code == 200 and len(long.json()["problems"]) == 2, long.text
        newest = max((project.path / "uploads").iterdir())  # numbered in upload order
        assert len(newest.name.encode()) < 255 and newest.name.endswith(".jsonl")
    # an uploads folder that cannot be written (read-only; here a file of that name): named
    uploads = project.path / "uploads"
    uploads.rename(project.path / "uploads-aside")
    try:
        uploads.write_text("a file where the folder goes")
        refused = client.post(
            "/api/admin/import", files={"file": ("q.jsonl", text)}, headers=headers
        )
    finally:
        uploads.unlink(missing_ok=True)
        (project.path / "uploads-aside").rename(uploads)
    assert refused.status_code == 422
    assert refused.json()["error"].startswith(f"cannot write the upload into {uploads}: ")


# JSON's escape of half a character: valid JSON, but no text that SQLite or a file can hold
LONE_SURROGATE = '"caption \\ud800 ends"'


def test_a_lone_surrogate_is_refused_by_field_never_a_server_error(project: Project) -> None:
    client = TestClient(
        create_app(project, ADAPTERS), base_url="http://127.0.0.1", raise_server_exceptions=False
    )
    version = "SELECT version FROM work WHERE id = ?"
    # a caption no other test of this module has saved (they share the project)
    mine = next(
        w for w in work_ids(project, "ann3", "write") if query(project, version, (w,))[0][0] == 0
    )
    headers = {"X-CSRF-Token": sign_in(client, "ann3"), "content-type": "application/json"}
    body = f'{{"version": 0, "content": {LONE_SURROGATE}}}'
    saved = client.post(f"/api/work/{mine}", content=body, headers=headers)
    assert saved.status_code == 422
    assert saved.json()["error"] == (
        "content: character 9 is a lone surrogate (\\ud800), half of a character; "
        "the text was not saved"
    )
    assert query(project, version, (mine,))[0][0] == 0
    client.post(
        f"/api/work/{mine}", json={"version": 0, "content": "A cube.", "status": "submitted"},
        headers=headers,
    )  # fmt: skip
    reviewer = TestClient(
        create_app(project, ADAPTERS), base_url="http://127.0.0.1", raise_server_exceptions=False
    )
    review_headers = {"X-CSRF-Token": sign_in(reviewer, "rob"), "content-type": "application/json"}
    body = f'{{"version": 1, "status": "returned", "comment": {LONE_SURROGATE}}}'
    sent_back = reviewer.post(f"/api/work/{mine}", content=body, headers=review_headers)
    assert sent_back.status_code == 422 and sent_back.json()["error"].startswith("comment: ")
    admin = TestClient(
        create_app(project, ADAPTERS), base_url="http://127.0.0.1", raise_server_exceptions=False
    )
    admin_headers = {"X-CSRF-Token": sign_in(admin, "ada"), "content-type": "application/json"}
    body = f'{{"kind": "answers", "user": {LONE_SURROGATE}}}'
    export = admin.post("/api/admin/export", content=body, headers=admin_headers)
    assert export.status_code == 422 and export.json()["error"].startswith("user: ")


def test_a_number_beyond_sqlite_is_refused_by_field_never_a_server_error(
    project: Project, client: TestClient
) -> None:
    """SQLite's integers are 64-bit: a larger id or version (a forged request) is a 422 naming
    it, never an OverflowError."""
    headers = {"X-CSRF-Token": sign_in(client, "ann4")}
    mine, big = work_ids(project, "ann4", "write")[0], 2**64
    asked = [
        (f"/api/work/{mine}", {"version": big, "content": "x"}),
        (f"/api/work/{mine}", {"version": 0, "content": "x", "resolves": [big]}),
        (f"/api/work/{big}", {"version": 0, "content": "x"}),
        (f"/api/work/{mine}/kept/{big}/discard", None),
        (f"/api/redteam/{big}/attack", {"answer": "x", "expected": 1}),
    ]
    for path, body in asked:
        refused = client.post(path, json=body, headers=headers)
        assert refused.status_code == 422, (path, refused.text)
        assert refused.json()["error"].startswith(("version", "resolves.0", "work_id", "kept_id"))
    for path in (f"/api/work/{big}", f"/work/{big}"):
        assert client.get(path).status_code == 422
    assert query(project, "SELECT version FROM work WHERE id = ?", (mine,))[0][0] == 0


def test_reviewers_read_submitted_captions_only(qa_release: Path, tmp_path: Path) -> None:
    """A writer's unsubmitted text is the writer's: a reviewer cannot read a draft (by id, on
    its page, in a conflict's answer), and a caption sent back shows what was sent back, not
    what its writer typed since (docs/review-app.md, Pages)."""
    project = make_project(qa_release, tmp_path)
    writer = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    mine = work_ids(project, "ann2", "write")[0]
    headers = {"X-CSRF-Token": sign_in(writer, "ann2")}

    def save(version: int, content: str, status: str | None = None) -> int:
        body = {"version": version, "content": content, **({"status": status} if status else {})}
        saved = writer.post(f"/api/work/{mine}", json=body, headers=headers)
        assert saved.status_code == 200, saved.text
        return int(saved.json()["version"])

    version = save(0, "my unsubmitted draft")
    reviewer = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    review_headers = {"X-CSRF-Token": sign_in(reviewer, "rita")}
    assert reviewer.get(f"/api/work/{mine}").status_code == 404
    assert reviewer.get(f"/work/{mine}").status_code == 404
    stale = reviewer.post(
        f"/api/work/{mine}", json={"version": 0, "status": "accepted"}, headers=review_headers
    )
    assert stale.status_code == 422 and "my unsubmitted draft" not in stale.text

    version = save(version, "the submitted caption", "submitted")
    assert reviewer.get(f"/api/work/{mine}").json()["content"] == "the submitted caption"
    sent_back = reviewer.post(
        f"/api/work/{mine}",
        json={"version": version, "status": "returned", "comment": "say more"},
        headers=review_headers,
    )
    assert sent_back.status_code == 200, sent_back.text
    save(sent_back.json()["version"], "half of a better caption")  # not submitted yet
    shown = reviewer.get(f"/api/work/{mine}").json()
    assert shown["status"] == "returned" and shown["content"] == "the submitted caption"
    page = reviewer.get("/review/captions").text
    assert "the submitted caption" in page and "half of a better caption" not in page
    assert "half of a better caption" not in reviewer.get(f"/work/{mine}").text
    refused = reviewer.post(
        f"/api/work/{mine}", json={"version": version, "status": "accepted"}, headers=review_headers
    )
    assert refused.status_code == 422 and "half of a better caption" not in refused.text
    assert writer.get(f"/api/work/{mine}").json()["content"] == "half of a better caption"
