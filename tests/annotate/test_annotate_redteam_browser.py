"""Red-team rounds in Debian's Chromium on the real engine (benchmarks/autoeval_video/redteam):
attacks with the expected verdict, a judge check that breaks the rule (its reasoning, with a
<script> in it, shown as text), a revision, a round where the rule holds, the rules export."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from annotate_support import ADAPTERS, PASSWORD, query, sign_in_page
from browser import Web
from conftest import AUTOEVAL
from vidbench.annotate import assign, auth, exports
from vidbench.annotate.folder import import_folder
from vidbench.annotate.web.app import create_app

pytestmark = pytest.mark.slow


HONEST = "The person is fastening the child's seat belt."
SNEAKY = "<script>alert('attack')</script> buckling a bag strap while a baby watches."
PATCH = "\n6. Buckling a bag strap is not fastening the seat belt: such an answer is wrong."


def _judge(body: dict) -> str:
    """Fooled by the sneaky answer (with a script in its reasoning) until the rule is patched."""
    prompt = str(body["messages"])
    if "baby watches" in prompt and "bag strap is not" not in prompt:
        return "<script>alert('judge')</script> Buckling is close to fastening.\n1"
    if "baby watches" in prompt:
        return "Rule 6: a bag strap is not the seat belt.\n0"
    return "The seat belt is fastened.\n1"


def test_red_team_rounds_in_the_browser(
    tmp_path: Path,
    web: Web,
    fake: Callable[..., Any],
) -> None:
    from vidbench.annotate.project import Project
    from vidbench.models.registry import ModelChoice

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(AUTOEVAL / "AUTO-EVAL-VIDEO.json", data / "AUTO-EVAL-VIDEO.json")
    project = Project.init(tmp_path / "project", data)
    conn = project.connect()
    assert import_folder(conn, data, "ada", ADAPTERS).added > 0
    auth.add_user(conn, "red", "annotator", PASSWORD)
    auth.add_user(conn, "ada", "admin", PASSWORD)
    assign.assign(conn, "rule", 1, "ada")
    conn.close()
    work_id, ref = query(
        project, "SELECT w.id, i.ref FROM work w JOIN items i ON i.id = w.item_id ORDER BY i.ref"
    )[0]
    server = fake(reply=_judge)
    judge = ModelChoice(
        f"openai-compat:{server.base_url}#judge", {"backoff": "0.01"}, "--judge-opt"
    )
    base = web.serve(create_app(project, ADAPTERS, judge))
    page = web.open()
    sign_in_page(page, base, "red")
    page.goto(f"{base}/work/{work_id}")
    rule0 = page.locator("pre.rule").inner_text()
    for answer, expected in ((HONEST, "1"), (SNEAKY, "0")):
        page.fill("[data-rt-attack] textarea[name=answer]", answer)
        page.select_option("[data-rt-attack] select[name=expected]", expected)
        page.click("[data-rt-attack] button[type=submit]")
        expect(page.locator(".attacks li")).to_have_count(1 if expected == "1" else 2)
    assert SNEAKY in page.locator(".attacks").inner_text()

    page.click("[data-rt-check]")
    # the first round starts the judge's client: 5-6 s on a loaded 2-core machine
    expect(page.locator(".round")).to_have_count(1, timeout=30_000)
    shown = page.locator(".round").inner_text()
    assert "1 of 2 attacks break it · run by red" in shown  # who ran it, as who attacked
    assert page.locator(".attacks [data-by]").all_inner_texts() == ["by red", "by red"]
    assert "<script>alert('judge')</script> Buckling is close" in shown

    patched = rule0.replace("\n[Answer to be judged]:", PATCH + "\n[Answer to be judged]:")
    page.fill("[data-rt-revise] textarea[name=rule]", patched)
    page.fill("[data-rt-revise] input[name=note]", "bag straps")
    page.click("[data-rt-revise] button[type=submit]")
    expect(page.locator("h2", has_text="Current rule")).to_have_text("Current rule (v1)")
    page.click("[data-rt-check]")
    expect(page.locator(".round")).to_have_count(2, timeout=30_000)
    expect(page.locator("[data-rt-status]")).to_have_text("holds")

    conn = project.connect()
    done = exports.export_kind(project, conn, "rules", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    lines = done.path.read_text("utf-8").splitlines()
    rules = {str(r["ID"]): r["Rule"] for r in map(json.loads, filter(str.strip, lines))}
    assert PATCH.strip() in rules[ref] and done.written == 1
    authors = {
        r[0] for r in query(project, "SELECT author FROM events WHERE action LIKE 'redteam.%'")
    }
    assert authors == {"red"}
