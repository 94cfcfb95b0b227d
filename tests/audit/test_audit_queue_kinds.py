"""`vidbench annotate import-audit` takes only the flag kinds the audit writes: an audit.json
edited by hand, or written by another version, with a kind it does not know has that item
refused, named with the kind and the known kinds; the other items are queued as usual."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest

from annotate_support import ADAPTERS
from audit_support import ROWS, TOML
from custom_support import make_bench
from vidbench.annotate.audit_queue import import_audit
from vidbench.annotate.project import Project
from vidbench.cli import main
from vidbench.core.audit_flags import FLAG_KINDS


def _flag(kind: str, suggested: str | None = None) -> dict[str, object]:
    return {"kind": kind, "score": 0.9, "reason": f"why {kind}", "suggested": suggested}


def test_a_flag_kind_the_audit_does_not_write_refuses_its_item(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", toml=TOML, rows=ROWS)  # q03 and q07: gold D
    project = Project.init(tmp_path / "project", bench)
    audit = tmp_path / "audit.json"
    items = [
        {"id": "q03", "gold": "D", "flags": [_flag("gold", "B"), _flag("chance")]},
        {"id": "q07", "gold": "D", "flags": [_flag("glod", "B"), _flag("chance")]},
    ]
    audit.write_text(json.dumps({"summary": {"task": f"custom:{bench}"}, "items": items}))

    with closing(project.connect()) as conn:
        done = import_audit(conn, project.data, audit, ADAPTERS, "test")
        refs = [r["ref"] for r in conn.execute("SELECT ref FROM items WHERE kind = 'audit'")]

    known = ", ".join(FLAG_KINDS)
    assert known == "gold, blind, chance, easy, negative, duplicate"
    assert done.imported.problems == [
        f"{audit}: item q07: unknown flag kind 'glod' (the audit writes {known})"
    ]
    assert done.flagged == 1 and done.imported.added == 1
    assert refs == ["q03:D:gold+chance"]


def test_items_whose_videos_lie_outside_the_data_folder_are_said_to_have_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app serves nothing outside the project's data folder: a benchmark whose videos/ is a
    link out of it gets queue items with no video, which the import says (it said nothing)."""
    bench = make_bench(tmp_path / "bench", toml=TOML, rows=ROWS)
    (bench / "videos").rename(tmp_path / "elsewhere")
    (bench / "videos").symlink_to(tmp_path / "elsewhere")
    Project.init(tmp_path / "project", bench)
    audit = tmp_path / "audit.json"
    items = [{"id": "q03", "gold": "D", "flags": [_flag("gold", "B")]}]
    audit.write_text(json.dumps({"summary": {"task": f"custom:{bench}"}, "items": items}))

    assert main(["annotate", "import-audit", str(tmp_path / "project"), str(audit)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "1 item queued with no video to show (q03)" in said
    assert str(bench) in said
