"""A benchmark from a package of its own: one folder plus one registration (an entry point),
and every framework command works on it with nothing in vidbench changed: its own command,
validate, run, report, view, and the review app's init, export and media."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from vidbench.annotate import auth, work
from vidbench.annotate.project import Project
from vidbench.media.encode import write_mp4

HERE = Path(__file__).parent
ENTRY_POINTS = "[vidbench.benchmarks]\ntoy = toybench:BENCHMARK\n"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on the path holding the toy package and its one registration (what `pip install`
    of a package declaring the entry point would leave in site-packages)."""
    site = tmp_path_factory.mktemp("site")
    (site / "toybench").mkdir()
    shutil.copy(HERE / "toybench_source.py", site / "toybench" / "__init__.py")
    info = site / "toybench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


@pytest.fixture(scope="module")
def toy_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("toy")
    rows = []
    for i, shape in enumerate(["cube", "ball", "cube", "cone"]):
        frames = [np.full((16, 16, 3), 40 * i + 10 * t, np.uint8) for t in range(4)]
        write_mp4(data / "videos" / f"clip{i}.mp4", frames)
        rows.append(
            {
                "id": f"q{i}",
                "question": f"What shape is clip {i}?",
                "options": ["cube", "ball", "cone"],
                "answer": "ABCA"[i],
                "shape": shape,
                "video": f"videos/clip{i}.mp4",
            }
        )
    rows.append({**rows[0], "id": "q-broken", "video": "videos/missing.mp4"})
    (data / "toy_questions.json").write_text(json.dumps(rows))
    return data


def vidbench(plugin: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "vidbench.cli", "--no-progress", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_toy_benchmark_is_registered_with_its_tasks_and_command(
    plugin: Path, toy_data: Path
) -> None:
    tasks = vidbench(plugin, "tasks")
    assert tasks.returncode == 0, tasks.stderr
    assert "toy-qa" in tasks.stdout and "4dbench-qa" in tasks.stdout
    counted = vidbench(plugin, "toy-count", str(toy_data))
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == "4 toy questions"


def test_validate_run_report_and_view_work_on_it(
    plugin: Path, toy_data: Path, tmp_path: Path
) -> None:
    checked = vidbench(plugin, "validate", "toy", str(toy_data))
    assert checked.returncode == 1  # the broken row is named
    assert "q-broken: missing video" in checked.stdout

    out = tmp_path / "run"
    run = vidbench(
        plugin, "run", "toy-qa", "--data", str(toy_data), "--model", "constant:A", "--out", str(out)
    )
    assert run.returncode == 3, run.stderr  # complete but for the broken row: incomplete
    results = json.loads((out / "results.json").read_text())
    assert results["n"] == 5 and results["n_scored"] == 4 and results["errors"] == 1
    assert results["columns"]["Accuracy"] == pytest.approx(50.0)  # gold A, B, C, A

    table = tmp_path / "table"
    report = vidbench(plugin, "report", str(out), "--out", str(table))
    assert report.returncode == 0, report.stderr
    assert "Accuracy" in (table / "table.md").read_text()

    page = tmp_path / "page"
    view = vidbench(plugin, "view", str(out), "--out", str(page), "--videos", "none")
    assert view.returncode == 0, view.stderr
    meta = (page / "data" / "meta.js").read_text()
    assert "cube" in meta and "ball" in meta  # samples grouped by the toy's own field
    text = (page / "data" / "samples-000.js").read_text()
    shown = {row["id"]: row for row in json.loads(text[text.index(",") + 1 : -3])}
    assert {i: row["group"] for i, row in shown.items()} == {
        "q0": "cube", "q1": "ball", "q2": "cube", "q3": "cone", "q-broken": "",
    }  # fmt: skip
    q1 = shown["q1"]["runs"][0]  # its score's typed fields: outcome, parsed, gold, details
    assert (q1["outcome"], q1["parsed"], shown["q1"]["gold"]) == ("wrong", "A", "B")
    assert q1["scores"] == {"letters": "3"}
    assert shown["q-broken"]["runs"][0]["outcome"] == "no-answer"


def test_a_scorer_that_returns_no_sample_score_is_refused(
    plugin: Path, toy_data: Path, tmp_path: Path
) -> None:
    """A plugin task whose `score` returns a dict (the shape before SampleScore) stops the score
    stage with an error naming the task; the answers it had are kept in the store."""
    (plugin / "toydict").mkdir(exist_ok=True)
    (plugin / "toydict" / "__init__.py").write_text(DICT_SCORER)
    entry = plugin / "toybench-0.1.dist-info" / "entry_points.txt"
    entry.write_text(ENTRY_POINTS + "toydict = toydict:BENCHMARK\n")
    try:
        out = tmp_path / "run"
        args = ("run", "toydict-qa", "--data", str(toy_data), "--model", "constant:A")
        run = vidbench(plugin, *args, "--out", str(out))
        assert run.returncode == 2, run.stderr
        said = " ".join(run.stderr.split())
        assert (
            "task toydict-qa (toydict.DictQA): score() returned a dict, not a SampleScore" in said
        )
        assert (out / "store.sqlite").is_file() and not (out / "samples.jsonl").exists()
    finally:
        entry.write_text(ENTRY_POINTS)


DICT_SCORER = """
import dataclasses
from toybench import BENCHMARK, SPEC, ToyQA
from vidbench.tasks.registry import TaskEntry


class DictQA(ToyQA):
    def score(self, sample, reply, verdicts):
        return {"parsed": "A", "correct": True}


BENCHMARK = dataclasses.replace(
    BENCHMARK,
    name="toydict",
    tasks={"toydict-qa": TaskEntry(lambda r: DictQA(r.name, r.spec), SPEC, lambda s, m: None, ())},
    commands=None,
    review=None,
)
"""


def test_a_broken_plugin_is_named_and_the_rest_works(plugin: Path, tmp_path: Path) -> None:
    site = tmp_path / "broken-site"
    info = site / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[vidbench.benchmarks]\nbroken = nowhere:BENCHMARK\n")
    tasks = vidbench(site, "tasks")
    assert tasks.returncode == 0
    assert "skipped benchmark plugin broken (nowhere:BENCHMARK)" in tasks.stderr
    assert "No module named 'nowhere'" in tasks.stderr
    assert "4dbench-qa" in tasks.stdout


def test_the_review_app_takes_its_items_and_gives_its_answers_back(
    plugin: Path, toy_data: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    init = vidbench(plugin, "annotate", "init", str(project), "--data", str(toy_data))
    assert init.returncode == 0, init.stderr
    assert "4 items added" in init.stdout
    assert "q-broken: missing video" in init.stderr  # the bad row is named, the rest imported
    add_user = ["annotate", "users", "add", str(project), "ann", "--role", "annotator"]
    added = subprocess.run(
        [sys.executable, "-m", "vidbench.cli", *add_user, "--password-stdin"],
        input="a long enough password\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    assert vidbench(plugin, "annotate", "assign", str(project), "answer").returncode == 0

    opened = Project.open(project)
    with closing(opened.connect()) as conn:
        [ann] = [u for u in auth.users(conn) if u.name == "ann"]
        mine = work.mine(conn, ann)
        assert len(mine) == 4 and {w["job"] for w in mine} == {"answer"}
        first = next(w for w in mine if w["ref"] == "toy/q0")
        work.save(conn, first["id"], ann, first["version"], "(A)", "submitted")

    export = vidbench(
        plugin, "annotate", "export", str(project), "answers", "--benchmark", "toy", "--user", "ann"
    )
    assert export.returncode == 0, export.stderr
    written = project / "exports" / "toy-ann.jsonl"
    assert [json.loads(line) for line in written.read_text().splitlines()] == [
        {"id": "q0", "answer": "(A)"}
    ]
    assert export.stderr.count("not answered") == 3  # the others are named, never dropped
