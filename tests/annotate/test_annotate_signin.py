"""Signing in: attempts are counted per account and client before the password is hashed, and
a handful lock that pair (only that pair) out for a time that doubles; the wait is told (429,
Retry-After, on the page) and no password is hashed meanwhile; a success or `annotate users
unlock` clears it; parallel sign-ins hash at most a few passwords at once; the login page shows
only its own messages, whatever `?error=` says."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
import requests
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, PASSWORD, make_project, query
from browser import serve_asgi
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.cli import main


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


@pytest.fixture
def fresh(qa_release: Path, tmp_path: Path) -> Project:
    """A project of its own: the sign-in counts live in its database."""
    return make_project(qa_release, tmp_path)


def _client(app: FastAPI, address: str = "10.0.0.1") -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", client=(address, 50000))


@pytest.mark.slow  # each try hashes a password
def test_failed_sign_ins_lock_the_account_and_client_out_with_a_growing_wait(
    fresh: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashes = Hashes(monkeypatch)
    app = create_app(fresh, ADAPTERS)
    clock = Clock()
    app.state.login_throttle.clock = clock
    client = _client(app)
    for _ in range(5):  # five tries go ahead, the fifth locking the pair for 30 s
        wrong = _try(client, "ann1", "not the password")
        assert wrong.status_code == 303 and wrong.headers["location"] == "/login?error=wrong"
    calls = hashes.calls
    locked = _try(client, "ann1", PASSWORD)  # even the right password waits
    assert locked.status_code == 429 and locked.headers["retry-after"] == "30"
    assert "Too many failed sign-ins: try again in 30 s." in locked.text
    assert hashes.calls == calls  # refused before any hashing
    # only this account from this client is locked: the others sign in as ever
    assert _try(client, "ann2", PASSWORD).headers["location"] == "/"
    assert _try(_client(app, "10.0.0.2"), "ann1", PASSWORD).headers["location"] == "/"
    clock.now += 30.01
    assert _try(client, "ann1", "wrong again").status_code == 303  # the 6th: locked 60 s
    assert _try(client, "ann1", PASSWORD).headers["retry-after"] == "60"
    clock.now += 60.01
    assert _try(client, "ann1", "wrong again").status_code == 303  # the 7th: locked 120 s
    assert _try(client, "ann1", PASSWORD).headers["retry-after"] == "120"
    clock.now += 120.01
    right = _try(client, "ann1", PASSWORD)
    assert right.status_code == 303 and right.headers["location"] == "/"
    # a success starts the pair again from nothing
    for _ in range(4):
        assert _try(client, "ann1", "nope").status_code == 303
    assert _try(client, "ann1", PASSWORD).headers["location"] == "/"


@pytest.mark.slow
def test_a_burst_of_parallel_wrong_passwords_hashes_a_handful_and_locks_no_one_else(
    fresh: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thirty wrong passwords for one account sent at once from one address: each is counted
    before it is hashed, so five are hashed and the rest refused; the admin signs in from the
    same address at once."""
    hashes = Hashes(monkeypatch)
    with serve_asgi(create_app(fresh, ADAPTERS)) as base:
        answers = _parallel(base, [("ann4", "not the password")] * 30)
        assert sorted(answers) == [303] * 5 + [429] * 25
        assert hashes.calls == 5
        assert _parallel(base, [("ada", PASSWORD)]) == [303]


@pytest.mark.slow
def test_one_client_trying_many_names_locks_no_real_account_out(
    fresh: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(fresh, ADAPTERS)
    client = _client(app)
    for n in range(30):  # a name each time: every one is hashed (no name is told apart)
        assert _try(client, f"guess{n}", "password1").status_code == 303
    assert _try(client, "ann2", PASSWORD).headers["location"] == "/"


@pytest.mark.slow
def test_an_admin_clears_a_lock_from_the_command_line(
    fresh: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    client = _client(create_app(fresh, ADAPTERS))
    for _ in range(5):
        _try(client, "rita", "not the password")
    assert _try(client, "rita", PASSWORD).status_code == 429
    assert main(["annotate", "users", "unlock", str(fresh.path), "rita"]) == 0
    printed = capsys.readouterr().out
    cleared = r"rita from 10\.0\.0\.1: 5 attempts cleared \(locked for [23]\d s more\)"
    assert re.search(cleared, printed), printed
    assert _try(client, "rita", PASSWORD).headers["location"] == "/"
    assert main(["annotate", "users", "unlock", str(fresh.path), "rita"]) == 0
    assert "rita: no sign-in attempts counted; nothing to clear" in capsys.readouterr().out
    events = query(fresh, "SELECT author, action, detail FROM events WHERE action = 'user.unlock'")
    assert [tuple(e) for e in events] == [
        ("cli", "user.unlock", "rita (clients: 10.0.0.1)"),
        ("cli", "user.unlock", "rita (clients: none)"),
    ]


def _parallel(base: str, tries: list[tuple[str, str]]) -> list[int]:
    """Sign-ins sent at the same moment, each through its own login form: their statuses."""
    sessions, forms = [], []
    for name, password in tries:
        session = requests.Session()
        token = re.search(r'name="csrf" value="([^"]+)"', session.get(f"{base}/login").text)
        sessions.append(session)
        forms.append({"name": name, "password": password, "csrf": token.group(1)})
    start = threading.Barrier(len(tries))
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
    return answers


@pytest.mark.slow
def test_parallel_sign_ins_hash_a_bounded_number_at_once(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashes = Hashes(monkeypatch)
    with serve_asgi(create_app(project, ADAPTERS)) as base:
        answers = _parallel(base, [("rob", PASSWORD)] * 16)
    assert sorted(answers) == [303] * 16  # all signed in, none turned away
    assert hashes.calls == 16 and hashes.peak <= 2  # HashSlots' default


def test_the_login_page_shows_only_its_own_messages(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    project = Project.init(tmp_path / "project", tmp_path / "data")
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    forged = client.get("/login", params={"error": "Your account is locked: call 1-555-0100"})
    assert "1-555-0100" not in forged.text and 'class="error"' not in forged.text
    assert "Wrong name or password." in client.get("/login?error=wrong").text
