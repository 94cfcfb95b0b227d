"""Assignment as a team expects it: roles decide who gets work (admins only when asked), all of
an object's questions go to the same person, captions to everyone who writes, counts balanced,
and the plan printed before anything is written."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, PASSWORD, query, sign_in
from vidbench.annotate import assign, auth, items
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.cli import main
from vidbench.core.errors import ConfigError


def _project(tmp_path: Path, people: dict[str, str], objects: dict[str, int]) -> Project:
    """A project with `objects` (uid -> how many QA questions) and a caption item per object."""
    (tmp_path / "data").mkdir()
    project = Project.init(tmp_path / "project", tmp_path / "data")
    conn = project.connect()
    out = items.Imported()
    for uid, n in objects.items():
        for j in range(n):
            record = {"id": f"{uid}_{j}", "uid": uid, "Question": f"q{j}?", "Category": "Action"}
            items.add_item(conn, "qa", f"{uid}_{j}", record, "test", out)
        items.add_item(conn, "caption", uid, {"uid": uid}, "test", out)
    for name, role in people.items():
        auth.add_user(conn, name, role, PASSWORD)
    conn.close()
    return project


def _holders(project: Project, job: str) -> dict[str, list[str]]:
    """item id -> the names of the people given it, in slot order."""
    rows = query(
        project,
        "SELECT w.item_id, u.name FROM work w JOIN users u ON u.id = w.user_id WHERE w.job = ? "
        "ORDER BY w.item_id, w.slot",
        (job,),
    )
    out: dict[str, list[str]] = {}
    for item, name in rows:
        out.setdefault(item, []).append(name)
    return out


def _by_object(holders: dict[str, list[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item, names in holders.items():
        out.setdefault(item.removeprefix("qa:").split("_")[0], set()).update(names)
    return out


OBJECTS = {f"{i:032x}": 5 for i in range(8)}  # 40 questions on 8 objects


def test_qa_goes_to_reviewers_only_one_object_to_one_person(tmp_path: Path, capsys) -> None:
    project = _project(tmp_path, {"ada": "admin", "rita": "reviewer"}, OBJECTS)
    assert main(["annotate", "assign", str(project.path), "qa", "--n", "1"]) == 0
    printed = capsys.readouterr().out
    # the plan first (every eligible person and what they get), then what was written
    assert printed.index("rita") < printed.index("40 assignments added")
    assert "  rita  reviewer   +40 items (8 objects or videos): 0 -> 40\n" in printed
    assert "ada" not in printed
    assert Counter(n for names in _holders(project, "review").values() for n in names) == {
        "rita": 40
    }


def test_objects_stay_whole_and_counts_balance(tmp_path: Path) -> None:
    people = {"ada": "admin", "rita": "reviewer", "rob": "reviewer", "ann": "annotator"}
    project = _project(tmp_path, people, OBJECTS)
    conn = project.connect()
    assert assign.assign(conn, "qa", 1, "test") == 40
    holders = _holders(project, "review")
    assert all(len(names) == 1 for names in _by_object(holders).values())  # objects whole
    assert Counter(names[0] for names in holders.values()) == {"rita": 20, "rob": 20}

    # a new object's questions and a new question of a known object, a third reviewer: the new
    # question joins its object's reviewer, the new object goes to the least loaded (the new one)
    known = next(iter(OBJECTS))
    keeper = holders[f"qa:{known}_0"][0]
    out = items.Imported()
    items.add_item(conn, "qa", f"{known}_9", {"uid": known, "Question": "late?"}, "test", out)
    for j in range(3):
        items.add_item(
            conn, "qa", f"{'f' * 32}_{j}", {"uid": "f" * 32, "Question": "new?"}, "t", out
        )
    auth.add_user(conn, "rex", "reviewer", PASSWORD)
    planned = assign.plan(conn, "qa", 1)
    assert sorted((item, person) for item, person, _ in planned.rows) == sorted(
        [(f"qa:{known}_9", auth_id(conn, keeper))]
        + [(f"qa:{'f' * 32}_{j}", auth_id(conn, "rex")) for j in range(3)]
    )
    assert assign.apply(conn, planned, "test") == 4
    assert assign.assign(conn, "qa", 1, "test") == 0  # nothing left: never taken away either

    # double review: the second reviewer of an object is one person too, and nobody twice
    assert assign.assign(conn, "qa", 2, "test") == 44
    conn.close()
    holders = _holders(project, "review")
    assert all(len(set(names)) == 2 for names in holders.values())
    assert all(len(names) == 2 for names in _by_object(holders).values())
    loads = Counter(n for names in holders.values() for n in names)
    assert set(loads) == {"rita", "rob", "rex"} and max(loads.values()) - min(loads.values()) <= 5


def auth_id(conn, name: str) -> int:  # type: ignore[no-untyped-def]
    return next(u.id for u in auth.users(conn) if u.name == name)


def test_captions_go_to_everyone_who_writes_admins_when_asked(tmp_path: Path) -> None:
    people = {"ada": "admin", "rita": "reviewer", **{f"ann{i}": "annotator" for i in range(4)}}
    project = _project(tmp_path, people, {f"{i:032x}": 1 for i in range(3)})
    conn = project.connect()
    assert assign.assign(conn, "caption", None, "test") == 15  # 4 annotators + 1 reviewer
    writers = _holders(project, "write")
    assert all(set(names) == set(people) - {"ada"} for names in writers.values())
    with pytest.raises(ConfigError, match="need 6 distinct people.*--admins gives admins work"):
        assign.plan(conn, "caption", 6)
    assert assign.assign(conn, "caption", 6, "test", admins=True) == 3  # ada joins, when asked
    # baseline answers go to annotators: reviewers have seen the gold answers
    assert assign.eligible_roles("answer", admins=False) == ("annotator",)
    conn.close()


def test_dry_run_and_per_item(tmp_path: Path, capsys) -> None:
    project = _project(tmp_path, {"rita": "reviewer", "rob": "reviewer"}, {"a" * 32: 4})
    assert main(["annotate", "assign", str(project.path), "qa", "--dry-run"]) == 0
    assert "dry run: nothing assigned" in capsys.readouterr().out
    assert _holders(project, "review") == {}
    assert main(["annotate", "assign", str(project.path), "qa", "--per-item"]) == 0
    assert Counter(n[0] for n in _holders(project, "review").values()) == {"rita": 2, "rob": 2}


def test_the_admin_previews_the_plan_then_applies_it(tmp_path: Path) -> None:
    project = _project(tmp_path, {"ada": "admin", "rita": "reviewer"}, OBJECTS)
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    csrf = sign_in(client, "ada")
    headers = {"X-CSRF-Token": csrf}
    preview = client.post(
        "/api/admin/assign", json={"kind": "qa", "dry_run": True}, headers=headers
    ).json()
    assert preview["planned"] == 40 and preview["added"] == 0
    assert [(p["name"], p["added"], p["subjects"]) for p in preview["people"]] == [("rita", 40, 8)]
    assert _holders(project, "review") == {}
    done = client.post("/api/admin/assign", json={"kind": "qa"}, headers=headers).json()
    assert done["added"] == 40
    with_admins = client.post(
        "/api/admin/assign", json={"kind": "qa", "n": 2, "admins": True}, headers=headers
    ).json()
    assert with_admins["added"] == 40 and {p["name"] for p in with_admins["people"]} == {
        "ada",
        "rita",
    }
    bad = client.post("/api/admin/assign", json={"kind": "qa", "n": 0}, headers=headers)
    assert bad.status_code == 422


def test_plan_lines_name_each_eligible_person(tmp_path: Path) -> None:
    project = _project(tmp_path, {"rita": "reviewer", "rob": "reviewer"}, {"b" * 32: 2})
    conn = project.connect()
    lines = assign.plan(conn, "qa").lines()
    conn.close()
    assert lines[0] == (
        "qa items to 1 person each (an object's items together): 2 assignments to add"
    )
    assert [line.split()[0] for line in lines[1:]] == ["rita", "rob"]
