"""Helpers for the annotation app's tests: a project on a small 4D-Bench folder with people, and
signing in through the real login form (TestClient or a live server)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vidbench.annotate import assign, auth
from vidbench.annotate.adapters import registered_adapters
from vidbench.annotate.folder import import_folder
from vidbench.annotate.project import Project

ADAPTERS = registered_adapters()  # the registered benchmarks' review adapters, as the CLI's

PASSWORD = "correct horse battery"
PEOPLE = {  # annotators first: the first objects' captions go to them (reviewers write too)
    **{f"ann{i}": "annotator" for i in range(1, 7)},
    "ada": "admin",
    "rita": "reviewer",
    "rob": "reviewer",
}


COLOURS = ("(A) red", "(B) blue", "(C) green", "(D) white")


def qa_candidate(
    uid: str,
    suffix: str,
    question: str = "What colour is it?",
    options: Sequence[str] = COLOURS,
    answer: int = 1,
    category: str = "Appearance",
    **more: Any,
) -> dict[str, Any]:
    """A 4D-Bench QA candidate as a review queue holds it (id `UID_SUFFIX`)."""
    return {"id": f"{uid}_{suffix}", "uid": uid, "Category": category, "Question": question,
            "Options": list(options), "Answer index": answer, **more}  # fmt: skip


def make_project(release: Path, tmp: Path) -> Project:
    """A project on a copy of `release` (a 4D-Bench release root) with PEOPLE, captions given
    to five writers and each QA item to one reviewer."""
    data = tmp / "data"
    shutil.copytree(release, data, symlinks=True)
    project = Project.init(tmp / "project", data)
    conn = project.connect()
    try:
        import_folder(conn, project.data, "test", ADAPTERS)
        for name, role in PEOPLE.items():
            auth.add_user(conn, name, role, PASSWORD)
        assign.assign(conn, "caption", None, "test")
        assign.assign(conn, "qa", None, "test")
    finally:
        conn.close()
    return project


def work_ids(project: Project, name: str, job: str) -> list[int]:
    conn = project.connect()
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT w.id FROM work w JOIN users u ON u.id = w.user_id "
                "WHERE u.name = ? AND w.job = ? ORDER BY w.item_id",
                (name, job),
            )
        ]
    finally:
        conn.close()


def query(project: Project, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
    conn = project.connect()
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def accounts(project: Project) -> dict[str, auth.User]:
    """The project's accounts by name."""
    conn = project.connect()
    try:
        return {u.name: u for u in auth.users(conn)}
    finally:
        conn.close()


def sign_in(client, name: str, password: str = PASSWORD) -> str:  # type: ignore[no-untyped-def]
    """Sign in through the login form; returns the session's CSRF token (from the page)."""
    page = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    done = client.post(
        "/login", data={"name": name, "password": password, "csrf": token}, follow_redirects=False
    )
    assert done.status_code == 303 and done.headers["location"] == "/", done.text
    home = client.get("/")
    return re.search(r'<meta name="csrf" content="([^"]+)"', home.text).group(1)


def sign_in_page(page, base: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in through the login form in a Playwright page."""
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def writers(project: Project, uid: str) -> list[tuple[int, str]]:
    """(work id, writer name) of an object's caption work, in slot order."""
    rows = query(
        project,
        "SELECT w.id, u.name FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE w.item_id = ? AND w.job = 'write' ORDER BY w.slot",
        (f"caption:{uid}",),
    )
    return [(r[0], r[1]) for r in rows]
