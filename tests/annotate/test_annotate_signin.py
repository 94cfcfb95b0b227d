"""Signing in: failed sign-ins lock the account and the client out for a time that doubles, the
wait is told (429, Retry-After, on the page) and no password is hashed meanwhile; a success
clears it; parallel sign-ins hash at most a few passwords at once; the login page shows only its
own messages, whatever `?error=` says."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
import requests
from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, PASSWORD, make_project
from browser import serve_asgi
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app


@pytest.fixture(scope="module")
def project(qa_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(qa_release, tmp_path_factory.mktemp("annotate_signin"))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Hashes:
    """Counts argon2 verifications (the real ones run) and the most running at once."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = self.running = self.peak = 0
        self.lock = threading.Lock()
        real = PasswordHasher.verify

        def verify(hasher: PasswordHasher, hash: str, password: str) -> bool:
            with self.lock:
                self.calls += 1
                self.running += 1
                self.peak = max(self.peak, self.running)
            try:
                return real(hasher, hash, password)
            finally:
                with self.lock:
                    self.running -= 1

        monkeypatch.setattr(PasswordHasher, "verify", verify)


def _try(client: TestClient, name: str, password: str):  # type: ignore[no-untyped-def]
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
    form = {"name": name, "password": password, "csrf": token}
    return client.post("/login", data=form, follow_redirects=False)


@pytest.mark.slow  # each try hashes a password
def test_failed_sign_ins_lock_the_account_out_with_a_growing_wait(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashes = Hashes(monkeypatch)
    app = create_app(project, ADAPTERS)
    clock = Clock()
    app.state.login_throttle.clock = clock
    client = TestClient(app, base_url="http://127.0.0.1")
    for _ in range(5):  # the first five failures cost nothing
        wrong = _try(client, "ann1", "not the password")
        assert wrong.status_code == 303 and wrong.headers["location"] == "/login?error=wrong"
    assert _try(client, "ann1", "still not it").status_code == 303  # the 6th: locked 1 s
    calls = hashes.calls
    locked = _try(client, "ann1", PASSWORD)  # even the right password waits
    assert locked.status_code == 429 and locked.headers["retry-after"] == "1"
    assert "Too many failed sign-ins: try again in 1 s." in locked.text
    assert hashes.calls == calls  # refused before any hashing
    clock.now += 1.01
    assert _try(client, "ann1", "wrong again").status_code == 303  # the 7th: locked 2 s
    assert _try(client, "ann1", PASSWORD).headers["retry-after"] == "2"
    clock.now += 2.01
    assert _try(client, "ann1", "wrong again").status_code == 303  # the 8th: locked 4 s
    assert _try(client, "ann1", PASSWORD).headers["retry-after"] == "4"
    clock.now += 4.01
    right = _try(client, "ann1", PASSWORD)
    assert right.status_code == 303 and right.headers["location"] == "/"
    # a success starts the account again from nothing
    for _ in range(5):
        assert _try(client, "ann1", "nope").status_code == 303
    assert _try(client, "ann1", PASSWORD).status_code == 303


@pytest.mark.slow
def test_one_client_trying_many_names_is_locked_out(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(project, ADAPTERS)
    app.state.login_throttle.clock = Clock()
    client = TestClient(app, base_url="http://127.0.0.1")
    for n in range(21):  # 21 names, four tries each at most: no account is locked
        assert _try(client, f"guess{n}", "password1").status_code == 303
    refused = _try(client, "ann2", PASSWORD)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


@pytest.mark.slow
def test_parallel_sign_ins_hash_a_bounded_number_at_once(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashes = Hashes(monkeypatch)
    app = create_app(project, ADAPTERS)
    with serve_asgi(app) as base:
        sessions, forms = [], []
        for _ in range(16):
            session = requests.Session()
            token = re.search(r'name="csrf" value="([^"]+)"', session.get(f"{base}/login").text)
            sessions.append(session)
            forms.append({"name": "rob", "password": PASSWORD, "csrf": token.group(1)})
        start = threading.Barrier(16)
        answers: list[int] = []

        def sign_in(session: requests.Session, form: dict[str, str]) -> None:
            start.wait()
            answer = session.post(f"{base}/login", data=form, allow_redirects=False, timeout=60)
            answers.append(answer.status_code)

        pairs = zip(sessions, forms, strict=True)
        threads = [threading.Thread(target=sign_in, args=pair) for pair in pairs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for session in sessions:
            session.close()
    assert sorted(answers) == [303] * 16  # all signed in, none turned away
    assert hashes.calls == 16 and hashes.peak <= 2  # HashSlots' default


def test_the_login_page_shows_only_its_own_messages(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    project = Project.init(tmp_path / "project", tmp_path / "data")
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    forged = client.get("/login", params={"error": "Your account is locked: call 1-555-0100"})
    assert "1-555-0100" not in forged.text and 'class="error"' not in forged.text
    assert "Wrong name or password." in client.get("/login?error=wrong").text
