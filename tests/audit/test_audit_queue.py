"""The audit's round trip through the review app (issue 34, item 3), on the declared benchmark
of tests/audit_support.py whose items q03 and q07 have a wrong gold: `vidbench audit` flags
them, `vidbench annotate import-audit` makes the queue, a reviewer keeps, fixes or drops each
through the app's real API, `vidbench annotate export PROJECT audit` writes the decisions file
the benchmark's loader applies, and the runs scored again on the fixed data audit clean: the
wrong golds fixed, the dropped items gone, the kept ones' flags shown as reviewed. Bad input:
another benchmark's audit, a file that is not an audit, decisions the app refuses."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, PASSWORD, sign_in, work_ids
from audit_support import make_runs
from custom_support import ROWS, make_bench, vidbench
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.custom.loader import load
from vidbench.benchmarks.custom.spec import read_spec

pytestmark = pytest.mark.slow

# what the reviewer decides on each flagged item (the audit's flags in the comments)
DECISIONS: dict[str, dict[str, str]] = {
    "q03": {"decision": "fix", "gold": "B"},  # gold (suggested B), chance
    "q07": {"decision": "fix", "gold": "B"},  # gold (suggested B), chance
    "q12": {"decision": "keep", "reason": "an easy warm-up question, on purpose"},  # easy
    "q13": {"decision": "drop", "reason": "two options fit the clip"},  # chance
    "q20": {"decision": "keep"},  # blind
    "q21": {"decision": "drop", "reason": "the question gives the answer away"},  # blind
}


def _add(monkeypatch: pytest.MonkeyPatch, project: Path, name: str, role: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert (
        vidbench("annotate", "users", "add", project, name, "--role", role, "--password-stdin") == 0
    )


def _flags(document: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """item id -> flag kind -> flag."""
    return {i["id"]: {f["kind"]: f for f in i["flags"]} for i in document["items"] if i["flags"]}


def _audit(runs: list[Path], out: Path) -> dict[str, Any]:
    assert vidbench("audit", *runs, "--out", out, "--no-duplicates") == 0
    return json.loads((out / "audit.json").read_text())


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """The benchmark, its audit folder and the audit (the runs under root/first/)."""
    root = tmp_path_factory.mktemp("queue")
    bench, runs = make_runs(root / "first")
    return bench, root / "audit", _audit(runs, root / "audit")


def test_flagged_items_are_kept_fixed_or_dropped_and_the_rerun_audit_is_clean(
    audited: tuple[Path, Path, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, audit_dir, document = audited
    bench = shutil.copytree(source, tmp_path / "bench")  # this test changes the benchmark
    flagged = _flags(document)
    assert set(flagged) == set(DECISIONS)
    assert flagged["q03"]["gold"]["suggested"] == "B" and flagged["q07"]["gold"]["suggested"] == "B"

    project = tmp_path / "project"
    assert vidbench("annotate", "init", project, "--data", bench) == 0
    _add(monkeypatch, project, "rita", "reviewer")
    capsys.readouterr()
    assert vidbench("annotate", "import-audit", project, audit_dir / "audit.json") == 0
    said = capsys.readouterr().out
    assert "6 item(s) with open flags" in said and "6 items added" in said
    assert vidbench("annotate", "assign", project, "audit") == 0
    # importing again adds nothing twice
    assert vidbench("annotate", "import-audit", project, audit_dir / "audit.json") == 0
    assert "0 items added, 6 already there" in capsys.readouterr().out

    opened = Project.open(project)
    mine = work_ids(opened, "rita", "audit")
    assert len(mine) == 6
    client = TestClient(create_app(opened, ADAPTERS), base_url="http://127.0.0.1")
    csrf = {"X-CSRF-Token": sign_in(client, "rita")}
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for work_id in mine:
        got = client.get(f"/api/work/{work_id}").json()
        by_id[got["data"]["id"]] = (work_id, got)
    assert set(by_id) == set(DECISIONS)

    # the queue page shows the reason, the gold and the audit's suggestion
    page = client.get(f"/work/{by_id['q03'][0]}").text
    assert "by vidbench audit" in page and "Question 3: what does object 3 do" in page
    reason = re.search(r"<span data-flag-reason>(.*?)</span>", page, re.S)
    assert reason and reason.group(1).startswith("gold: the models strong on the rest favour B")
    assert "(6 of 7 chose B, 0 the gold D" in reason.group(1)
    assert "\nchance: 0 of 7 models right" in reason.group(1)
    assert re.search(r'<li class="gold"[^>]*data-gold>.*?<span class="letter">D', page, re.S)
    assert re.search(r'<li class=" suggested"[^>]*data-suggested>.*?letter">B', page, re.S)

    def save(key: str, review: dict[str, str], status: str = "submitted") -> Any:
        work_id, got = by_id[key]
        body = {"version": got["version"], "content": json.dumps(review), "status": status}
        return client.post(f"/api/work/{work_id}", json=body, headers=csrf)

    # what the app refuses, saying why
    refused = {
        "a fix chooses the new gold, one of A, B, C, D": {"decision": "fix"},
        "D is the gold already": {"decision": "fix", "gold": "D"},
        "a drop needs a reason": {"decision": "drop", "reason": " "},
        "unknown decision 'maybe'": {"decision": "maybe"},
    }
    for why, review in refused.items():
        answer = save("q03", review)
        assert answer.status_code == 422 and why in answer.text, (why, answer.text)
    for key, review in DECISIONS.items():
        answer = save(key, review)
        assert answer.status_code == 200, (key, answer.text)

    capsys.readouterr()
    assert vidbench("annotate", "export", project, "audit") == 0
    said = capsys.readouterr()
    exported = project / "exports" / "faulty-decisions.jsonl"
    assert f"6 records written to {exported}" in "".join(said.out.splitlines())  # Rich wraps lines
    assert said.err == ""  # nothing left out
    flat = " ".join(said.out.split())
    assert 'and add decisions = "decisions.jsonl" to' in flat  # how the benchmark reads it
    lines = {r["id"]: r for r in map(json.loads, exported.read_text().splitlines())}
    assert {k: r["decision"] for k, r in lines.items()} == {
        k: d["decision"] for k, d in DECISIONS.items()
    }
    assert lines["q03"]["answer"] == "B" and lines["q03"]["was"] == "D"
    assert lines["q03"]["flags"] == ["gold", "chance"] and lines["q03"]["by"] == "rita"
    assert lines["q13"]["reason"] == "two options fit the clip"
    assert lines["q12"]["flags"] == ["easy"] and "answer" not in lines["q12"]

    # the rebuilt data: the benchmark reads the decisions file it names
    shutil.copy(exported, bench / "decisions.jsonl")
    toml = bench / "benchmark.toml"
    toml.write_text(toml.read_text() + 'decisions = "decisions.jsonl"\n')
    loaded = load(read_spec(bench), bench)
    assert loaded.problems == []
    golds = {s.id: s.answer for s in loaded.items}
    assert len(golds) == 38 and "q13" not in golds and "q21" not in golds
    assert golds["q03"] == "B" and golds["q07"] == "B" and golds["q12"] == "A"
    # the first audit no longer matches the rebuilt data: each item named, none queued
    capsys.readouterr()
    assert vidbench("annotate", "import-audit", project, audit_dir / "audit.json") == 0
    said = capsys.readouterr()
    err = " ".join(said.err.split())
    assert "0 items added, 2 already there" in said.out  # q12 and q20: kept, the same flags
    assert "item q03: the audit saw the gold D, the data has B (changed since the audit?)" in err
    assert "item q13: not in this project's data" in err and "item q21: not in" in err
    # exported again from the rebuilt data: the same file (the rows are read as written)
    capsys.readouterr()
    assert vidbench("annotate", "export", project, "audit") == 0
    assert capsys.readouterr().err == ""
    assert exported.read_text() == (bench / "decisions.jsonl").read_text()

    # the runs scored again on the fixed data, and audited again: the flags are gone
    (tmp_path / "again").mkdir()
    _, runs = make_runs(tmp_path / "again", bench)
    again = _audit(runs, tmp_path / "audit-again")
    flags = _flags(again)
    assert {"q03", "q07"}.isdisjoint(flags)  # fixed: every seeing model agrees with the gold
    assert {"q13", "q21"}.isdisjoint(i["id"] for i in again["items"])
    assert {k: f["reviewed"] for k, f in flags["q12"].items()} == {"easy": True}
    assert {k: f["reviewed"] for k, f in flags["q20"].items()} == {"blind": True}
    open_flags = {k for k, kinds in flags.items() if any(not f["reviewed"] for f in kinds.values())}
    assert open_flags == set() and again["summary"]["flagged_items"] == 0
    assert again["summary"]["flags"]["gold"] == 0
    assert again["summary"]["reviewed"] == {
        "items": 2,
        "flags": {"gold": 0, "blind": 1, "chance": 0, "easy": 1, "negative": 0, "duplicate": 0},
    }
    # nothing left to queue: the kept items are not asked again
    assert (
        vidbench("annotate", "import-audit", project, tmp_path / "audit-again" / "audit.json") == 0
    )
    assert "0 item(s) with open flags" in capsys.readouterr().out


def test_an_audit_of_another_benchmark_or_no_audit_is_refused(
    audited: tuple[Path, Path, dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, audit_dir, _ = audited
    other = make_bench(tmp_path / "other", rows=ROWS)  # "my-bench", not "faulty"
    project = tmp_path / "project"
    assert vidbench("annotate", "init", project, "--data", other) == 0
    capsys.readouterr()
    assert vidbench("annotate", "import-audit", project, audit_dir / "audit.json") == 2
    err = " ".join(capsys.readouterr().err.split())  # Rich wraps lines
    assert "the audit is of the benchmark 'faulty'" in err and "another project's audit" in err

    # the audit's folder (its --out) stands for its audit.json; a folder without one is named
    assert vidbench("annotate", "import-audit", project, audit_dir) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the audit is of the benchmark 'faulty'" in err
    assert vidbench("annotate", "import-audit", project, tmp_path) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'audit.json'}:" in "".join(err.split())
    assert "cannot read it ([Errno 2] No such file" in " ".join(err.split())

    not_audit = tmp_path / "results.json"
    not_audit.write_text('{"summary": {}}')
    assert vidbench("annotate", "import-audit", project, not_audit) == 2
    err = capsys.readouterr().err
    assert str(not_audit) in "".join(err.split()) and ": not an audit" in " ".join(err.split())

    # an audit of a benchmark the queue cannot write back to: named, with the ones it can
    mmworld = tmp_path / "mmworld-audit.json"
    mmworld.write_text(json.dumps({"items": [], "summary": {"task": "mmworld"}}))
    assert vidbench("annotate", "import-audit", project, mmworld) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "an audit of 'mmworld': the audit queue cannot write decisions back" in err
    assert "it takes audits of: declared benchmarks (custom:DIR, a benchmark.toml)" in err


def test_double_review_exports_what_both_decided_and_names_the_rest(
    audited: tuple[Path, Path, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, audit_dir, _ = audited
    bench = shutil.copytree(source, tmp_path / "bench")
    project = tmp_path / "project"
    assert vidbench("annotate", "init", project, "--data", bench) == 0
    for name in ("rita", "rob"):
        _add(monkeypatch, project, name, "reviewer")
    assert vidbench("annotate", "import-audit", project, audit_dir / "audit.json") == 0
    assert vidbench("annotate", "assign", project, "audit", "--n", "2") == 0
    opened = Project.open(project)
    for name, q03 in (("rita", "B"), ("rob", "C")):
        client = TestClient(create_app(opened, ADAPTERS), base_url="http://127.0.0.1")
        csrf = {"X-CSRF-Token": sign_in(client, name)}
        for work_id in work_ids(opened, name, "audit"):
            got = client.get(f"/api/work/{work_id}").json()
            key = got["data"]["id"]
            if key == "q03":
                review = {"decision": "fix", "gold": q03}
            elif key == "q12":
                review = {"decision": "keep"}
            elif name == "rita":  # rob has not decided the others yet
                review = {"decision": "drop", "reason": "unclear"}
            else:
                continue
            body = {"version": got["version"], "content": json.dumps(review), "status": "submitted"}
            assert client.post(f"/api/work/{work_id}", json=body, headers=csrf).status_code == 200
    capsys.readouterr()
    assert vidbench("annotate", "export", project, "audit") == 3  # written; the rest left out
    said = capsys.readouterr()
    assert "1 record written to" in said.out  # q12, kept by both
    left_out = " ".join(said.err.split())
    assert "audit:q03:D:gold+chance: the reviewers disagree (rita: fix to B, rob: fix to C)" in (
        left_out
    )
    for key in ("q07:D:gold+chance", "q13:B:chance", "q20:A:blind", "q21:B:blind"):
        assert f"audit:{key}: decision pending (rob)" in left_out
    lines = (project / "exports" / "faulty-decisions.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["q12"]
    assert json.loads(lines[0])["by"] == "rita, rob"
