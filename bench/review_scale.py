"""The review app as a project grows: 1,000, 10,000 and 100,000 items with 10 people.

    python bench/review_scale.py [--sizes 1000,10000,100000] [--keep DIR] [--profile STEP]

For each size N it builds two projects and times each step, as the command line and the
browser run them (the pages through the real app, in this process, signed in through the form;
each page timed warm, its kind served once before, as on a server that has been up):

- a 4D-Bench project of N items: N/2 questions (4d_qa.json, four rendered objects' videos) that
  `annotate init` imports as N/2 QA candidates to review and N/2 questions to answer (plus an
  item per object to caption); `assign` of each (10 people: 6 annotators, 3 reviewers, an
  admin); the admin page; a reviewer's home page (My work) and one of their work pages; the
  `qa` and `answers` exports;
- a declared benchmark of N rows (benchmark.toml, questions.jsonl), `annotate init` on it, an
  audit.json flagging every row, `import-audit`, `assign audit`, an audit work page and `export
  audit`.

It prints one row per size: seconds per step (a figure that grows much faster than N, or a page
over a few seconds, is a defect). --profile STEP prints cProfile's top functions of that step at
the largest size (a step's name as the table's header has it).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from fastapi.testclient import TestClient

from scale import declared_questions, questions, render  # bench/ is on sys.path when run
from vidbench.annotate import assign, auth
from vidbench.annotate.adapters import registered_adapters
from vidbench.annotate.audit_queue import export_audit, import_audit
from vidbench.annotate.exports import export_kind
from vidbench.annotate.folder import import_folder
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app

PASSWORD = "scale bench password"
PEOPLE = {
    **{f"ann{i}": "annotator" for i in range(1, 7)},
    **{f"rev{i}": "reviewer" for i in range(1, 4)},
    "ada": "admin",
}
ADAPTERS = registered_adapters()
T = TypeVar("T")


class Steps:
    """Each step's seconds; the one named by --profile is profiled too."""

    def __init__(self, profile: str | None) -> None:
        self.seconds: dict[str, float] = {}
        self.profile = profile
        self.stats: pstats.Stats | None = None

    def time(self, name: str, call: Callable[[], T]) -> T:
        profiler = cProfile.Profile() if name == self.profile else None
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        try:
            return call()
        finally:
            if profiler is not None:
                profiler.disable()
                self.stats = pstats.Stats(profiler)
            self.seconds[name] = time.perf_counter() - started


def sign_in(client: TestClient, name: str) -> None:
    page = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    done = client.post(
        "/login",
        data={"name": name, "password": PASSWORD, "csrf": token.group(1)},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text


def page(client: TestClient, path: str) -> str:
    got = client.get(path)
    if got.status_code != 200:
        raise SystemExit(f"{path}: {got.status_code} {got.text[:500]}")
    return got.text


def add_people(project: Project) -> None:
    with closing(project.connect()) as conn:
        for name, role in PEOPLE.items():
            auth.add_user(conn, name, role, PASSWORD)


def two_pieces_of_work(
    conn: sqlite3.Connection, person: str, offset: int, job: str | None = None
) -> tuple[int, int]:
    """The ids of two of `person`'s pieces of work (of `job`, or any), by item from `offset`:
    a page to warm, then one to time."""
    rows = conn.execute(
        "SELECT w.id FROM work w JOIN users u ON u.id = w.user_id WHERE u.name = ? "
        "AND (? IS NULL OR w.job = ?) ORDER BY w.item_id LIMIT 2 OFFSET ?",
        (person, job, job, offset),
    ).fetchall()
    first, second = (row["id"] for row in rows)
    return first, second


def fourd_project(rendered: Path, n: int, root: Path, steps: Steps) -> None:
    data = questions(rendered, max(n // 2, 1), root / "data")
    project = Project.init(root / "project", data)
    with closing(project.connect()) as conn:
        steps.time("init", lambda: import_folder(conn, project.data, "bench", ADAPTERS))
    add_people(project)
    with closing(project.connect()) as conn:
        steps.time("assign qa", lambda: assign.assign(conn, "qa", None, "bench"))
        steps.time("assign answer", lambda: assign.assign(conn, "answer", None, "bench"))
        assign.assign(conn, "caption", None, "bench")
        first, second = two_pieces_of_work(conn, "rev1", n // 12, job="review")
    app = create_app(project, ADAPTERS)
    with TestClient(app) as admin, TestClient(app) as reviewer:
        sign_in(admin, "ada")
        sign_in(reviewer, "rev1")
        for client, path in ((admin, "/admin"), (reviewer, "/"), (reviewer, f"/work/{first}")):
            page(client, path)  # warm: its templates compiled, as on a server that has served
        steps.time("admin page", lambda: page(admin, "/admin"))
        steps.time("home page", lambda: page(reviewer, "/"))
        steps.time("work page", lambda: page(reviewer, f"/work/{second}"))
    with closing(project.connect()) as conn:
        steps.time(
            "export qa", lambda: export_kind(project, conn, "qa", "bench", None, "", ADAPTERS)
        )
        steps.time(
            "export answers",
            lambda: export_kind(project, conn, "answers", "bench", "ann1", "4dbench", ADAPTERS),
        )


def declared(rendered: Path, n: int, root: Path) -> tuple[Path, Path]:
    """A declared benchmark of `n` rows (bench/scale.py's, on the rendered objects' views) and an
    audit.json flagging every row."""
    data = declared_questions(rendered, n, root / "bench")
    reason = "most models chose another option"
    flagged = []
    with (data / "questions.jsonl").open() as f:
        for k, line in enumerate(f):
            gold = json.loads(line)["answer"]
            flagged.append(
                {"id": f"q{k:06d}", "gold": gold,
                 "flags": [{"kind": "gold", "reason": reason, "suggested": "ABCD"[(k + 1) % 4]}]}
            )  # fmt: skip
    audit = root / "audit.json"
    audit.write_text(json.dumps({"summary": {"task": f"custom:{data}"}, "items": flagged}))
    return data, audit


def audit_project(rendered: Path, n: int, root: Path, steps: Steps) -> None:
    data, audit = declared(rendered, n, root)
    project = Project.init(root / "project", data)
    add_people(project)
    with closing(project.connect()) as conn:
        import_folder(conn, project.data, "bench", ADAPTERS)
        steps.time("import-audit", lambda: import_audit(conn, data, audit, ADAPTERS, "bench"))
        steps.time("assign audit", lambda: assign.assign(conn, "audit", None, "bench"))
        first, second = two_pieces_of_work(conn, "rev2", n // 6)
    app = create_app(project, ADAPTERS)
    with TestClient(app) as reviewer:
        sign_in(reviewer, "rev2")
        page(reviewer, f"/work/{first}")  # warm
        steps.time("audit page", lambda: page(reviewer, f"/work/{second}"))
    with closing(project.connect()) as conn:
        steps.time("export audit", lambda: export_audit(project, conn, ADAPTERS, "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="items per project")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp folder)")
    parser.add_argument("--profile", help="a step to profile at the largest size")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="vidbench-review-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        rendered = render(root / "rendered", 4)
        table: list[tuple[int, dict[str, float]]] = []
        last: Steps | None = None
        for n in sizes:
            last = Steps(args.profile if n == sizes[-1] else None)
            fourd_project(rendered, n, root / f"fourd-{n}", last)
            audit_project(rendered, n, root / f"audit-{n}", last)
            table.append((n, last.seconds))
            print(f"{n:,} items: " + ", ".join(f"{k} {v:.2f} s" for k, v in last.seconds.items()),
                  file=sys.stderr, flush=True)  # fmt: skip
        names = list(table[0][1])
        print("| items | " + " | ".join(names) + " |")
        print("|" + " --- |" * (len(names) + 1))
        for n, seconds in table:
            print(f"| {n:,} | " + " | ".join(f"{seconds[k]:.2f} s" for k in names) + " |")
        if last is not None and last.stats is not None:
            last.stats.sort_stats("cumulative").print_stats(30)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
