"""`vidbench annotate` from the command line: a project on an MMWorld folder, accounts with the
password from stdin only, three raters per question, the raters file the MMWorld loader reads,
and the admin's progress per person and per task."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import vidbench
from annotate_support import ADAPTERS, PASSWORD, query, sign_in
from mmworld_support import make_mmworld
from vidbench.annotate import auth, progress, work
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.mmworld.loader import read_raters
from vidbench.cli import main

RATERS = ("r1", "r2", "r3")
SRC = Path(vidbench.__file__).resolve().parents[1]  # the server runs the code under test


def _add(monkeypatch: pytest.MonkeyPatch, project: Path, name: str, role: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    return main(
        ["annotate", "users", "add", str(project), name, "--role", role, "--password-stdin"]
    )


def test_mmworld_raters_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    data = make_mmworld(tmp_path / "mmworld")
    project = tmp_path / "project"
    assert main(["annotate", "init", str(project), "--data", str(data)]) == 0
    for name in RATERS:
        assert _add(monkeypatch, project, name, "annotator") == 0
    assert _add(monkeypatch, project, "ada", "admin") == 0
    assert _add(monkeypatch, project, "ada", "admin") == 2  # a second ada is refused
    assert "exists already" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a password is never a flag value
        main(
            ["annotate", "users", "add", str(project), "eve", "--role", "admin", "--password", "x"]
        )
    capsys.readouterr()
    assert main(["annotate", "assign", str(project), "answer", "--n", "3"]) == 0

    opened = Project.open(project)
    conn = opened.connect()
    people = {u.name: u for u in auth.users(conn)}
    rows = query(
        opened,
        "SELECT w.id, u.name, i.data FROM work w JOIN users u ON u.id = w.user_id "
        "JOIN items i ON i.id = w.item_id WHERE w.job = 'answer' ORDER BY w.item_id, w.slot",
    )
    expected: dict[str, list[bool]] = {}
    for n, (work_id, name, data_json) in enumerate(rows):
        item = json.loads(data_json)
        right = n % 3 != 1  # every second rater of each question is wrong
        gold = item["gold"].upper()  # MMWorld's letters are lower case
        answer = f"({gold if right else next(o for o in 'ABC' if o != gold)})"
        last = n == len(rows) - 1  # the last question's third rater chose and did not submit
        work.save(conn, work_id, people[name], 0, answer, None if last else "submitted")
        expected.setdefault(item["id"], []).append(right)
    per_person = progress.per_person(conn)
    conn.close()
    assert len(expected) > 1 and all(len(v) == 3 for v in expected.values())
    assert {(p.name, p.job, p.by_status["submitted"]) for p in per_person} == {
        (name, "answer", len(expected) - (name == rows[-1][1])) for name in RATERS
    }
    drafted = json.loads(rows[-1][2])["id"]
    del expected[drafted]  # a draft is not an answer: the question waits for its third rater

    capsys.readouterr()
    assert main(["annotate", "export", str(project), "raters"]) == 3  # written, not complete
    said = capsys.readouterr().err
    assert f"mmworld/{drafted}: 2 of 3 raters submitted an answer" in said
    assert "incomplete: 1 item left out, listed above (exit code 3)" in " ".join(said.split())
    exported = project / "exports" / "human_raters.json"
    raters, problems = read_raters(exported.parent)
    assert not problems
    assert {k: list(v) for k, v in raters.items()} == expected

    client = TestClient(create_app(opened, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "ada")
    page = client.get("/admin").text
    # one row per rater, and the task row
    assert page.count('<td class="wide">answer</td>') == 3 and '<tr data-task="answer">' in page
    assert f'<td data-label="items">{len(expected) + 1}</td>' in page


def test_a_moved_or_damaged_project_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    data = make_mmworld(tmp_path / "work" / "mmworld")
    project = tmp_path / "work" / "project"
    assert main(["annotate", "init", str(project), "--data", str(data)]) == 0
    assert _add(monkeypatch, project, "ada", "admin") == 0
    moved = tmp_path / "moved"
    (tmp_path / "work").rename(moved)  # the project and its data together, elsewhere
    capsys.readouterr()
    assert main(["annotate", "users", "list", str(moved / "project")]) == 0
    assert capsys.readouterr().out.split() == ["ada", "admin"]
    assert Project.open(moved / "project").data == (moved / "mmworld").resolve()

    (moved / "mmworld").rename(tmp_path / "elsewhere")  # the data alone: named, nothing opens
    assert main(["annotate", "users", "list", str(moved / "project")]) == 2
    said = "".join(capsys.readouterr().err.split())  # the console wraps long paths anywhere
    assert "project.json:itsdatafolder" in said and "isnotthere" in said
    (tmp_path / "elsewhere").rename(moved / "mmworld")

    database = moved / "project" / "annotate.sqlite"
    database.write_bytes(database.read_bytes()[:1000])  # a copy cut short
    assert main(["annotate", "users", "list", str(moved / "project")]) == 2
    said = "".join(capsys.readouterr().err.split())
    assert "annotate.sqlite:notausableSQLitedatabase" in said
    database.unlink()  # copied without it: never a new empty project as if the work were gone
    assert main(["annotate", "serve", str(moved / "project"), "--port", "0"]) == 2
    said = "".join(capsys.readouterr().err.split())
    assert "noannotate.sqlite,whichholdsalloftheproject'swork" in said
    assert not database.exists()


def test_a_password_the_sign_in_form_would_refuse_is_refused_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    data = make_mmworld(tmp_path / "mmworld")
    project = tmp_path / "project"
    assert main(["annotate", "init", str(project), "--data", str(data)]) == 0
    capsys.readouterr()
    for name, length, code in (("long", 1025, 2), ("longest", 1024, 0)):
        monkeypatch.setattr("sys.stdin", io.StringIO("p" * length + "\n"))
        args = ["annotate", "users", "add", str(project), name, "--role", "annotator"]
        assert main([*args, "--password-stdin"]) == code
    assert "the password has 1025 characters: at most 1024" in capsys.readouterr().err
    client = TestClient(create_app(Project.open(project), ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "longest", "p" * 1024)  # the longest one taken signs in


def _serve(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "vidbench.cli", "annotate", "serve", str(project), *args]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_serve_binds_first_then_prints_the_address_it_listens_on(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    Project.init(tmp_path / "project", tmp_path / "data")
    server = _serve(tmp_path / "project", "--port", "0")  # 0: a free port, the real one printed
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
        assert found and int(found.group(1)) > 0, line
        # printed once bound: the address answers at once, with this app's sign-in page
        page = urllib.request.urlopen(f"http://127.0.0.1:{found.group(1)}/login", timeout=10)
        assert "vidbench annotate" in page.read().decode()

        # the same port again: refused at once, saying so and what to do, with no address
        second = _serve(tmp_path / "project", "--port", found.group(1))
        out, err = second.communicate(timeout=60)
        assert second.returncode == 2 and "serving" not in out
        assert f"port {found.group(1)} on 127.0.0.1 is in use" in err
        assert "--port N, or --port 0 for a free one" in err
        assert "Traceback" not in err
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)


def test_init_counts_each_item_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A synthetic release has each object's videos in both task folders: the object is one
    caption item, added once, not "already there" in a project that is new."""
    data = tmp_path / "data"
    synth = ["--no-progress", "synth", "4d", "--out", str(data), "--objects", "2"]
    assert main([*synth, "--frames", "12", "--size", "32"]) == 0
    capsys.readouterr()
    project = tmp_path / "project"
    assert main(["annotate", "init", str(project), "--data", str(data)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "22 items added"  # 10 QA items to review, 10 to answer, 2 objects to caption
    assert main(["annotate", "import", str(project), "folder"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "0 items added, 22 already there"
