"""`vidbench curate 4d qa` end to end against the fake chat server with scripted replies:
generation -> validation -> blind filter -> 4d_qa.json, the funnel, a rerun that asks nothing,
the output read by `run 4dbench-qa`, `validate 4dbench` and the annotate app's queue import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from qa_support import BLIND_BOTH, BLIND_ONE, OBJ0, OBJ1, OBJ2, Oracle, curate_args, write_objects

from vidbench.annotate.project import Project
from vidbench.benchmarks.fourd.review.items import import_queue
from vidbench.cli import main
from vidbench.core.files import read_jsonl
from vidbench.testing import ChatServer


@dataclass
class Curated:
    out: Path
    data: Path
    oracle: Oracle
    server: ChatServer
    args: list[str]
    exit_code: int
    requests: list[dict]
    max_in_flight: int


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory, shared_server: ChatServer) -> Iterator:
    root = tmp_path_factory.mktemp("qa")
    data = write_objects(root / "data")
    oracle = Oracle()
    shared_server.reset(reply=oracle)
    url = shared_server.base_url
    out = root / "out"
    blind2 = f"blind:openai-compat:{url}#blind2"
    args = curate_args(data, out, url, root / "frames", blind2)
    args += ["--concurrency", "4", "--max-side", "64"]
    code = main(args)
    in_flight = shared_server.stats().max_in_flight
    yield Curated(out, data, oracle, shared_server, args, code, shared_server.requests, in_flight)


def test_every_stage_asks_what_it_should(curated: Curated) -> None:
    assert curated.exit_code == 0
    # 2 objects x 5 subtasks, and the reply without JSON asked twice more (3 attempts)
    assert curated.oracle.seen["generate"] == 10 + 2
    assert curated.oracle.seen["validate"] == 9  # every candidate that parsed
    assert 1 < curated.max_in_flight <= 4  # --concurrency 4
    assert curated.oracle.seen["blind blind1"] == curated.oracle.seen["blind blind2"] == 8
    generation = [r for r in curated.requests if r["model"] == "generator"]
    images = [p for p in generation[0]["messages"][0]["content"] if p["type"] == "image_url"]
    assert len(images) == 18  # the official FrameSpec: views 1, 8, 16 x six frames
    blind = [r for r in curated.requests if r["model"].startswith("blind")]
    assert all(isinstance(r["messages"][0]["content"], str) or all(
        p["type"] == "text" for p in r["messages"][0]["content"]) for r in blind)  # fmt: skip


def test_funnel_counts_every_outcome(curated: Curated) -> None:
    funnel = json.loads((curated.out / "funnel.json").read_text())
    assert funnel["details"]["objects"] == {
        "layout": "official", "found": 3, "used": 2, "skipped": {"missing views": 1}
    }  # fmt: skip
    subtasks = funnel["details"]["subtasks"]
    counting = subtasks["Object Counting"]
    assert counting["generated"] == 3 and counting["parse rejects"] == {"duplicate options": 1}
    assert (counting["candidates"], counting["kept"]) == (2, 2)
    temporal = subtasks["Temporal Relationship"]
    assert (temporal["replies unparsed"], temporal["generated"], temporal["kept"]) == (1, 1, 1)
    action = subtasks["Action"]
    assert action["parse rejects"] == {
        "answer leaked in the question": 1, "answer not among the options": 1
    }  # fmt: skip
    assert (action["generated"], action["kept"]) == (4, 2)
    spatial = subtasks["Spatial Relationship"]
    assert spatial["validator rejects"] == {"wrong subtask": 1}
    assert (spatial["validator accepted"], spatial["kept"]) == (1, 1)
    appearance = subtasks["Appearance"]
    assert appearance["parse rejects"] == {"repeats an earlier question": 1}
    assert (appearance["blind-dropped"], appearance["kept"]) == (1, 1)
    total = funnel["details"]["total"]
    assert (total["generated"], total["candidates"], total["kept"]) == (13, 9, 7)
    assert total["undecided"] == total["call errors"] == 0
    assert funnel["details"]["calls this run"] == {"generate": 12, "validate": 9, "blind": 16}
    for stage in ("generate", "validate", "blind"):
        assert funnel["usage"][stage]["input_tokens"] > 0
    assert set(funnel["usage"]["blind"]["models"]) == {
        f"openai-compat:{curated.server.base_url}#blind1",
        f"blind:openai-compat:{curated.server.base_url}#blind2",
    }
    missing = [p for p in funnel["problems"] if p.get("reason") == "missing views"]
    assert missing[0]["uid"] == OBJ2 and "[8, 16]" in missing[0]["detail"]
    table = (curated.out / "funnel.md").read_text()
    assert "| kept | 2 | 1 | 2 | 1 | 1 | 7 |" in table
    assert "Retention: 7 kept of 13 generated" in table
    # 2 objects asked about 5 subtasks each: the total counts the objects, not object x subtask
    assert "| objects | 2 | 2 | 2 | 2 | 2 | 2 |" in table
    assert funnel["details"]["total"]["objects"] == 2
    qa = funnel["stages"]["qa"]
    # questions in, questions kept: the reply without any question is said apart
    assert (qa["unit"], qa["entered"], qa["kept"]) == ("questions", 13, 7)
    assert qa["uncounted"] == {"replies unparsed": 1}
    assert qa["entered"] - qa["kept"] == sum(qa["dropped"].values()) + qa["pending"]
    # the same counts per subtask (report/funnel.py's shared shape)
    assert set(qa["parts"]) == set(funnel["details"]["subtasks"])
    assert sum(part["kept"] for part in qa["parts"].values()) == 7
    assert main(["curate", "4d", "funnel", str(curated.out)]) == 0  # part 1's table reads it


def test_blind_filter_drops_what_both_answer(curated: Curated) -> None:
    found = {c["question"]: c for c in read_jsonl(curated.out / "candidates.jsonl")}
    both = next(c for q, c in found.items() if BLIND_BOTH in q)
    assert both["status"] == "blind-dropped"
    assert [b["correct"] for b in both["blind"].values()] == [True, True]
    one = next(c for q, c in found.items() if BLIND_ONE in q)
    assert one["status"] == "kept"
    assert [b["correct"] for b in one["blind"].values()] == [True, False]
    assert one["blind"]["blind 1"]["text"] == "Two"
    rejected = next(c for c in found.values() if c["status"] == "rejected")
    assert rejected["reason"] == "wrong subtask" and rejected["validation"]["accept"] is False


def test_output_is_official_and_balanced(curated: Curated) -> None:
    qa = json.loads((curated.out / "4d_qa.json").read_text())
    assert len(qa) == 7
    assert f"{OBJ1}_object_counting" in qa and f"{OBJ0}_object_counting" in qa
    assert all(k.split("_")[0] in (OBJ0, OBJ1) for k in qa)
    record = qa[f"{OBJ1}_object_counting"]
    assert record["Category"] == "Object Counting"
    assert record["Options"][record["Answer index"] - 1].endswith(" Three")
    letters = json.loads((curated.out / "funnel.json").read_text())["details"]["letter balance"]
    assert sorted(letters["Overall"].values()) == [1, 2, 2, 2]  # 7 over four letters
    for subtask in ("Object Counting", "Action"):  # two kept each: two different letters
        assert sorted(letters[subtask].values()) == [0, 0, 1, 1]


def test_output_runs_and_validates(curated: Curated, tmp_path: Path) -> None:
    assert main(["--no-progress", "validate", "4dbench", str(curated.out)]) == 0
    run = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(curated.out), "--model", "random"]
    assert main([*argv, "--out", str(run), "--cache-dir", str(tmp_path / "frames")]) == 0
    results = json.loads((run / "results.json").read_text())
    assert results["n"] == 7 and results["errors"] == 0


def test_review_queue_loads_in_the_annotate_app(curated: Curated, tmp_path: Path) -> None:
    project = Project.init(tmp_path / "project", curated.out)
    conn = project.connect()
    try:
        done = import_queue(conn, project.data, curated.out / "review_queue.jsonl", "t")
        rows = conn.execute("SELECT data FROM items WHERE kind = 'qa'").fetchall()
    finally:
        conn.close()
    assert (done.added, done.problems) == (7, [])
    record = json.loads(rows[0][0])
    assert record["provenance"]["machine_generated"] is True
    assert (project.data / record["views"][1]).is_file()  # through the videos link


def test_rerun_asks_nothing(curated: Curated) -> None:
    curated.server.reset(reply=curated.oracle)
    before = (curated.out / "4d_qa.json").read_text()
    assert main(curated.args) == 0
    assert curated.server.requests == []
    assert (curated.out / "4d_qa.json").read_text() == before
    funnel = json.loads((curated.out / "funnel.json").read_text())
    assert funnel["details"]["calls this run"] == {"generate": 0, "validate": 0, "blind": 0}
    assert funnel["details"]["total"]["kept"] == 7


def test_annotate_cli_imports_the_queue_beside_the_source_data(
    curated: Curated, tmp_path: Path
) -> None:
    project = tmp_path / "review"
    assert main(["annotate", "init", str(project), "--data", str(curated.data)]) == 0
    queue = str(curated.out / "review_queue.jsonl")
    assert main(["annotate", "import", str(project), "queue", queue]) == 0
    conn = Project.open(project).connect()
    try:
        rows = conn.execute("SELECT ref, data FROM items WHERE kind = 'qa'").fetchall()
    finally:
        conn.close()
    assert len(rows) == 7
    for _, data in rows:  # the views resolve inside the project's data folder
        record = json.loads(data)
        assert (curated.data / record["views"][16]).is_file()
        assert record["provenance"]["validator"].endswith("#validator")
