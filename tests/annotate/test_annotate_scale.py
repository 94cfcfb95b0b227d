"""The review app as a project grows (bench/review_scale.py has the figures): a person's pages
read by index, never the whole `work` or `items` table (a project of 100,000 items read every
row on every page), in as many statements whatever the number of items; My work lists a page of
its items at a time, the counts above them of all. Through the real app (TestClient), its
connections traced (FastAPI's dependency override hands the app a real connection that records
what it runs)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, make_project, sign_in, work_ids
from vidbench.annotate.exports import export_kind, review_agreement
from vidbench.annotate.project import Project
from vidbench.annotate.web import deps, pages
from vidbench.annotate.web.app import create_app


def _traced_client(project: Project, name: str) -> tuple[TestClient, list[str]]:
    """A signed-in client of the app and the statements its requests run (from now on)."""
    app = create_app(project, ADAPTERS)
    ran: list[str] = []

    def traced() -> Iterator[sqlite3.Connection]:
        conn = project.connect()
        conn.set_trace_callback(ran.append)
        try:
            yield conn
        finally:
            conn.close()

    app.dependency_overrides[deps.connection] = traced
    client = TestClient(app, base_url="http://127.0.0.1")
    sign_in(client, name)
    ran.clear()
    return client, ran


def _whole_reads(project: Project, statements: list[str]) -> list[str]:
    """The reads among `statements` that read a big table whole: a scan (users are few: not
    them), or a subquery asked once per row that searches by less than the row's item (one
    search of a job's whole work per item)."""
    conn = project.connect()
    try:
        found = []
        for sql in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            plan = conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            per_row = {r["id"] for r in plan if r["detail"].startswith("CORRELATED")}
            for row in plan:
                scan = re.match(r"SCAN (\w+)", row["detail"])
                if scan and scan.group(1) not in ("u", "o", "a", "users"):
                    found.append(f"{row['detail']}: {sql[:160]}")
                elif row["parent"] in per_row and not re.search(
                    r"(item_id|rowid|id)=\?", row["detail"]
                ):
                    found.append(f"per row, {row['detail']}: {sql[:160]}")
        return found
    finally:
        conn.close()


def test_a_persons_pages_read_by_index_in_a_fixed_number_of_statements(
    qa_release: Path, tmp_path: Path
) -> None:
    project = make_project(qa_release, tmp_path)
    first, *_ = work_ids(project, "rita", "review")
    client, ran = _traced_client(project, "rita")
    for path in (f"/work/{first}", f"/api/work/{first}", "/"):
        ran.clear()
        assert client.get(path).status_code == 200
        assert _whole_reads(project, ran) == [], path
    asked = len(ran)
    # twice the items: My work asks as many statements (no statement per item)
    conn = project.connect()
    conn.execute(
        "INSERT INTO items (id, kind, ref, data, source, created) SELECT id || ':copy', kind, "
        "ref || ':copy', data, source, created FROM items WHERE kind = 'qa'"
    )
    conn.execute(
        "INSERT INTO work (item_id, user_id, job, slot) SELECT item_id || ':copy', user_id, job, "
        "slot FROM work WHERE job = 'review'"
    )
    conn.close()
    ran.clear()
    assert client.get("/").status_code == 200
    assert len(ran) == asked


def test_exports_read_each_items_work_by_index(qa_release: Path, tmp_path: Path) -> None:
    project = make_project(qa_release, tmp_path)
    conn = project.connect()
    ran: list[str] = []
    conn.set_trace_callback(ran.append)
    try:
        for kind in ("qa", "captions"):
            export_kind(project, conn, kind, "test", None, "", ADAPTERS)
        export_kind(project, conn, "answers", "test", "ann1", "4dbench", ADAPTERS)
        review_agreement(conn)
    finally:
        conn.close()
    assert _whole_reads(project, ran) == []


def test_my_work_lists_a_page_at_a_time_with_the_counts_of_all(
    qa_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE_ROWS", 3)  # the fixture's few items over several pages
    project = make_project(qa_release, tmp_path)
    mine = work_ids(project, "rita", "write") + work_ids(project, "rita", "review")
    total = len(mine)
    assert total > 3
    client, _ = _traced_client(project, "rita")
    listed: list[str] = []
    page, seen_pages = client.get("/").text, 0
    while True:
        seen_pages += 1
        rows = re.findall(r'data-work-row="(\d+)"', page)
        assert 0 < len(rows) <= 3
        listed += rows
        assert f"{total} in all" in page or f"{total} of {total} shown" in page
        following = re.search(r'href="([^"]+)" rel="next"', page)
        if following is None:
            break
        page = client.get(following.group(1).replace("&amp;", "&")).text
    assert seen_pages == -(-total // 3)
    assert len(listed) == len(set(listed)) == total  # every item once, on some page
    assert {int(i) for i in listed} == set(mine)
    # the filters go with the pages, and a page past the last shows the last
    filtered = client.get("/?task=review&page=99").text
    assert 'rel="prev"' in filtered and "task=review" in filtered
    assert client.get("/?page=0").status_code == 422
