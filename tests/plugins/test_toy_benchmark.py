"""A benchmark from a package of its own (docs/examples/toy-benchmark, the Python-benchmark
tutorial's), installed by pip with its one registration (an entry point): every framework
command works on it with nothing in vidbench changed: its own command, validate, run, report,
view, and the review app's init, export and media. A plugin that does not load, or that claims a
name another benchmark holds, is named and skipped, and the rest works."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest
from plugin_support import fake_plugin, refused, run_vidbench

from vidbench.annotate import auth, work
from vidbench.annotate.project import Project


@pytest.mark.slow
def test_the_toy_benchmark_is_registered_with_its_tasks_and_command(
    toybench: Path, toy_data: Path
) -> None:
    tasks = run_vidbench([toybench], "tasks")
    assert tasks.returncode == 0, tasks.stderr
    assert "toy-qa" in tasks.stdout and "4dbench-qa" in tasks.stdout
    assert "skipped" not in tasks.stderr  # its variant family means what 4D-Bench's does
    counted = run_vidbench([toybench], "toy-count", str(toy_data))
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == "4 toy questions"


@pytest.mark.slow
def test_validate_run_report_and_view_work_on_it(
    toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    checked = run_vidbench([toybench], "validate", "toy", str(toy_data))
    assert checked.returncode == 1  # the broken row is named
    assert "q-broken: missing video" in checked.stdout

    out = tmp_path / "run"
    data, model = ["--data", str(toy_data)], ["--model", "constant:A"]
    run = run_vidbench([toybench], "run", "toy-qa:frames-3", *data, *model, "--out", str(out))
    assert run.returncode == 3, run.stderr  # complete but for the broken row: incomplete
    results = json.loads((out / "results.json").read_text())
    assert results["n"] == 5 and results["n_scored"] == 4 and results["errors"] == 1
    assert results["columns"]["Accuracy"] == pytest.approx(50.0)  # gold A, B, C, A
    assert results["frame_spec"]["frames"] == 3  # its own variant

    table = tmp_path / "table"
    report = run_vidbench([toybench], "report", str(out), "--out", str(table))
    assert report.returncode == 3, report.stderr  # the run is incomplete: its row says so
    assert "Accuracy" in (table / "table.md").read_text()
    assert "(incomplete: 1 of 5 not scored)" in (table / "table.md").read_text()

    page = tmp_path / "page"
    view = run_vidbench([toybench], "view", str(out), "--out", str(page), "--videos", "none")
    assert view.returncode == 0, view.stderr
    meta = (page / "data" / "meta.js").read_text()
    assert "cube" in meta and "ball" in meta  # samples grouped by the toy's own field
    text = (page / "data" / "samples-000.js").read_text()
    shown = {row["id"]: row for row in json.loads(text[text.index(",") + 1 : -3])}
    assert {i: row["group"] for i, row in shown.items()} == {
        "q0": "cube", "q1": "ball", "q2": "cone", "q3": "cube", "q-broken": "",
    }  # fmt: skip
    q1 = shown["q1"]["runs"][0]  # its score's typed fields: outcome, parsed, gold, details
    assert (q1["outcome"], q1["parsed"], shown["q1"]["gold"]) == ("wrong", "A", "B")
    assert q1["scores"] == {"options": "3"}
    assert shown["q-broken"]["runs"][0]["outcome"] == "no-answer"


def test_a_scorer_that_returns_no_sample_score_fails_its_samples_naming_the_task(
    toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    """A plugin task whose `score` returns a dict (the shape before SampleScore): each sample
    it does so for is named with the task and its code, its answer kept, and the run is
    incomplete (exit code 3), saying how to score the stored answers once the task is fixed."""
    entry_points = "[vidbench.benchmarks]\ntoydict = toydict:BENCHMARK\n"
    site = fake_plugin(tmp_path / "site", "toydict", entry_points, {"toydict": DICT_SCORER})
    out = tmp_path / "run"
    args = ("run", "toydict-qa", "--data", str(toy_data), "--model", "constant:A")
    run = run_vidbench([toybench, site], *args, "--out", str(out))
    assert run.returncode == 3, run.stderr
    said = " ".join(run.stderr.split())
    assert "the task's scorer failed on some answers" in said
    rows = {r["id"]: r for r in map(json.loads, (out / "samples.jsonl").open())}
    assert rows["q0"]["error"] == (
        "q0: task toydict-qa (toydict.DictQA): score() returned a dict, not a SampleScore "
        "(vidbench.SampleScore: its outcome, parsed answer, gold, groups and details; "
        "docs/results-schema.md describes it)"
    )
    assert (rows["q0"]["status"], rows["q0"]["outcome"]["reason"]) == ("score", "score-failed")
    assert rows["q0"]["raw_output"] == "A"  # the answer kept


DICT_SCORER = """
import dataclasses

from toybench import BENCHMARK
from toybench.task import SPEC, ToyQA, frame_modifier
from vidbench import TaskEntry


class DictQA(ToyQA):
    def score(self, sample, reply, verdicts):
        return {"parsed": "A", "correct": True}


entry = TaskEntry(lambda r: DictQA(r.name, r.spec), SPEC, frame_modifier, ())
BENCHMARK = dataclasses.replace(BENCHMARK, name="toydict", tasks={"toydict-qa": entry}, parts=())
"""


def test_a_broken_plugin_is_named_and_the_rest_works(tmp_path: Path) -> None:
    site = fake_plugin(
        tmp_path, "broken", "[vidbench.benchmarks]\nbroken = nowhere:BENCHMARK\n", {}
    )
    tasks = run_vidbench([site], "tasks")
    assert tasks.returncode == 0
    assert "skipped benchmark plugin broken (nowhere:BENCHMARK)" in tasks.stderr
    assert "No module named 'nowhere'" in tasks.stderr
    assert "4dbench-qa" in tasks.stdout


CLASHING = """
from dataclasses import replace

from toybench import BENCHMARK as TOY

TASK = replace(TOY, name="task-clash", tasks={"mmworld": TOY.tasks["toy-qa"]}, parts=())
NAME = replace(TOY, name="4dbench", tasks={"named-qa": TOY.tasks["toy-qa"]}, parts=())
FAMILY = replace(
    TOY, name="family", tasks={"family-qa": TOY.tasks["toy-qa"]},
    variant_families={"frames-N": "N frames of the whole clip"}, parts=(),
)
TWICE = replace(TOY, name="twice", parts=())
FINE = replace(TOY, name="fine", tasks={"fine-qa": TOY.tasks["toy-qa"]}, parts=())
"""


@pytest.mark.slow
def test_a_plugin_claiming_a_name_another_benchmark_holds_is_refused_naming_both(
    toybench: Path, tmp_path: Path
) -> None:
    entry_points = "[vidbench.benchmarks]\n" + "".join(
        f"{name.lower()} = clashing:{name}\n"
        for name in ("TASK", "NAME", "FAMILY", "TWICE", "FINE")
    )
    site = fake_plugin(tmp_path, "clashing", entry_points, {"clashing": CLASHING})
    tasks = run_vidbench([toybench, site], "tasks")
    assert tasks.returncode == 0, tasks.stderr
    assert refused(tasks.stderr) == [
        "skipped benchmark plugin task (clashing:TASK): its task name 'mmworld' is MMWorld's "
        "(vidbench.benchmarks.mmworld:BENCHMARK)",
        "skipped benchmark plugin name (clashing:NAME): its benchmark name '4dbench' is "
        "4D-Bench's (vidbench.benchmarks.fourd:BENCHMARK)",
        "skipped benchmark plugin family (clashing:FAMILY): its variant family 'frames-N' is "
        "4D-Bench's (vidbench.benchmarks.fourd:BENCHMARK)",
        "skipped benchmark plugin twice (clashing:TWICE): its task name 'toy-qa' is Toy's "
        "(plugin toy (toybench:BENCHMARK))",
    ]
    assert "fine-qa" in tasks.stdout and "toy-qa" in tasks.stdout
    assert "named-qa" not in tasks.stdout and "family-qa" not in tasks.stdout
    # the built-in keeps its meaning: 4D-Bench's placeholder text, not the refused plugin's
    assert "N >= 1 frames per view" in tasks.stdout and "whole clip" not in tasks.stdout


@pytest.mark.slow
def test_the_review_app_takes_its_items_and_gives_its_answers_back(
    toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    init = run_vidbench([toybench], "annotate", "init", str(project), "--data", str(toy_data))
    assert init.returncode == 0, init.stderr
    assert "4 items added" in init.stdout
    assert "q-broken: missing video" in init.stderr  # the bad row is named, the rest imported
    add_user = ["annotate", "users", "add", str(project), "ann", "--role", "annotator"]
    added = run_vidbench([], *add_user, "--password-stdin", stdin="a long enough password\n")
    assert added.returncode == 0, added.stderr
    assert run_vidbench([toybench], "annotate", "assign", str(project), "answer").returncode == 0

    opened = Project.open(project)
    with closing(opened.connect()) as conn:
        [ann] = [u for u in auth.users(conn) if u.name == "ann"]
        mine = work.mine(conn, ann)
        assert len(mine) == 4 and {w["job"] for w in mine} == {"answer"}
        first = next(w for w in mine if w["ref"] == "toy/q0")
        work.save(conn, first["id"], ann, first["version"], "(A)", "submitted")

    answers = ["answers", "--benchmark", "toy", "--user", "ann"]
    export = run_vidbench([toybench], "annotate", "export", str(project), *answers)
    assert export.returncode == 3, export.stderr  # written; three questions not answered
    written = project / "exports" / "toy-ann.jsonl"
    assert [json.loads(line) for line in written.read_text().splitlines()] == [
        {"id": "q0", "answer": "(A)"}
    ]
    assert export.stderr.count("not answered") == 3  # the others are named, never dropped
