"""`vidbench run mmworld...` end to end: columns, bad input, the three scoring modes against the
fake chat server, --runs, and the temporal ablations' frames."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mmworld_support import FRAMES, judge_sends, make_mmworld, records, scripted_server
from vidbench.benchmarks.mmworld.fields import AVERAGE, DISCIPLINES, FACETS, FLAGS
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK
from vidbench.testing import ChatServer

TABLE3 = [*DISCIPLINES, AVERAGE]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mmworld(tmp_path_factory.mktemp("mmworld_run"))


def run(*args: str) -> int:
    return main(["--no-progress", "run", *args])


def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())


def samples(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_rule_run_columns_chance_and_records(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    cache = str(tmp_path / "cache")
    args = ["--data", str(dataset), "--out", str(out), "--cache-dir", cache]
    assert run("mmworld:rule", "--model", "random-choice", *args) == 0
    res = results(out)
    assert list(res["columns"]) == [*TABLE3, *FACETS, *FLAGS.values()]
    assert res["column_groups"]["Table 3"] == TABLE3
    assert res["n"] == 14 and res["errors"] == 0
    assert res["column_n"][AVERAGE] == 14 and res["column_n"]["Art & Sports"] == 2
    types = [q["type"] for r in records() for q in r["questions"]]
    assert {f: res["column_n"][f] for f in FACETS} == {f: types.count(f) for f in FACETS}
    assert res["scoring"]["mode"] == "rule" and res["scoring"]["answer_parser"] == "letter-or-text"
    # exact expectation of random-choice: 13 questions of 4 options and one of 3
    assert res["chance"][AVERAGE] == pytest.approx(100 * (13 / 4 + 1 / 3) / 14)
    assert res["chance"]["Game"] == 25.0
    recs = samples(out)
    correct = sum(r["outcome"]["kind"] == "correct" for r in recs.values())
    assert res["columns"][AVERAGE] == pytest.approx(100 * correct / 14)
    first = recs["eng_vid1#0"]
    assert first["groups"] == {"discipline": "Tech & Engineering", "facet": "Explanation"}
    assert first["details"]["flags"] == ["Requires Visual"]
    assert [f["index"] for f in first["frames"]] == [0, 5, 11, 16, 22, 27, 33, 39]
    table = (out / "table.md").read_text()
    assert "### Table 3" in table and "### Table 4" in table
    assert "| random-choice (expected) |" in table


def test_human_raters_give_difficulty_columns(tmp_path: Path) -> None:
    root = make_mmworld(tmp_path / "data")
    votes = {"vid0#0": [1, 1, 1], "vid0#1": [1, 1, 0], "vid1#0": [0, 1, 0], "vid1#1": [0, 0, 0]}
    (root / "human_raters.json").write_text(json.dumps(votes))
    out = tmp_path / "res"
    args = ["--data", str(root), "--out", str(out), "--cache-dir", str(tmp_path / "cache")]
    assert run("mmworld:rule", "--model", "random-choice", *args) == 0
    res = results(out)
    levels = ["Easy", "Medium", "Hard", "Expert"]
    assert list(res["columns"])[-4:] == levels
    assert [res["column_n"][level] for level in levels] == [1, 1, 1, 1]
    assert res["column_groups"]["Difficulty (human raters)"] == levels
    assert samples(out)["vid1#0"]["groups"]["difficulty"] == "Hard"
    by_discipline = res["difficulty_by_discipline"]  # Figure 4b
    rows = samples(out)
    for qid, level in (
        ("vid0#0", "Easy"),
        ("vid0#1", "Medium"),
        ("vid1#0", "Hard"),
        ("vid1#1", "Expert"),
    ):
        cell = by_discipline[rows[qid]["groups"]["discipline"]][level]
        right = rows[qid]["outcome"]["kind"] == "correct"
        assert cell == {"accuracy": 100.0 * right, "n": 1}
    assert sum(c["n"] for d in by_discipline.values() for c in d.values()) == 4


def test_bad_input_counts_in_errors(tmp_path: Path) -> None:
    data = records()
    data[0]["questions"][1]["correct_answer_label"] = "e"
    data[1]["discipline"] = "Astrology"
    data[2]["questions"] = []
    root = make_mmworld(tmp_path / "data", data)
    (root / "vid4" / "vid4.mkv").unlink()
    out = tmp_path / "res"
    args = ["--data", str(root), "--out", str(out), "--cache-dir", str(tmp_path / "cache")]
    assert run("mmworld:rule", "--model", "random-choice", *args) == EXIT_INCOMPLETE
    res = results(out)
    assert res["errors"] == 6 and res["n_scored"] == 14 - 1 - 2 - 2 - 2
    assert res["errors_by_status"] == {"data": 6}
    errors = " | ".join(e["error"] for e in res["error_details"])
    for needle in (
        "video vid0: correct_answer_label 'e'",
        "video vid1: unknown discipline",
        "video vid2 has no questions",
        "video vid4: video not found",
    ):
        assert needle in errors


# ------------------------------------------------------------------- scoring modes and judge
# question marker -> (model reply, judge reply); the rest answer the gold label, judged "yes".
# Gold labels: q1 b, q2 c, q3 d, q4 a, q6 c.
SCRIPT = {
    "[q1]": ("b", "yes"),
    "[q2]": ("(c)", "Yes."),
    "[q3]": ("I think: option a of question 3", "no"),
    "[q4]": ("I cannot tell from these frames", "The model does not commit to any option."),
    "[q6]": ("d", ""),  # the judge's reply is empty
}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with scripted_server(SCRIPT) as s:
        yield s


# mode -> (scored, correct, judge errors, judged)
EXPECTED = {
    "rule": (14, 11, 0, 0),
    "rule+official": (14, 10, 0, 0),
    "judge-all": (12, 11, 2, 12),
    "judge-all+official": (13, 11, 1, 13),
    "judge-fallback": (13, 11, 1, 0),
    "judge-fallback+official": (14, 11, 0, 3),
}


def test_scoring_modes_with_scripted_judge(
    dataset: Path, tmp_path: Path, server: ChatServer
) -> None:
    out = tmp_path / "res"
    model = f"openai-compat:{server.base_url}#model"
    judge = f"openai-compat:{server.base_url}#judge"
    common = ["--data", str(dataset), "--model", model, "--out", str(out)]
    common += ["--cache-dir", str(tmp_path / "cache")]
    sends = []
    for mode, (scored, correct, judge_errors, judged) in EXPECTED.items():
        judging = [] if mode.startswith("rule") else ["--judge", judge]  # rule takes no judge
        complete = EXIT_INCOMPLETE if judge_errors else EXIT_OK
        assert run(f"mmworld:{mode}", *common, *judging) == complete, mode
        res = results(out)
        assert (res["n_scored"], res["errors"]) == (scored, judge_errors), mode
        assert res["columns"][AVERAGE] == pytest.approx(100 * correct / scored), mode
        assert res["errors_by_status"] == ({"judge": judge_errors} if judge_errors else {})
        assert res["scoring"]["judged"] == judged, mode
        sends.append(judge_sends(server))
    # the model was asked once per question, whatever the scoring mode
    assert len(server.requests) - sends[-1] == 14
    # judge-all: 14 prompts, the rambling one asked 3 times (never yes/no); official then only
    # re-asks the empty one; the fallback modes need nothing new
    assert sends == [0, 0, 16, 17, 17, 17]
    recs = samples(out)
    assert recs["vid2#0"]["details"] | {"video_id": "vid2"} == {
        "video_id": "vid2",
        "flags": recs["vid2#0"]["details"]["flags"],
        "scored_by": "judge",
        "verdict": "no",
    }
    assert recs["vid3#0"]["details"]["scored_by"] == "rule"
    assert recs["vid3#0"]["outcome"]["kind"] == "wrong"
    # judging again asks nothing already answered; only the failed (empty) call is retried
    assert run("mmworld:judge-all", *common, "--judge", judge) == EXIT_INCOMPLETE
    assert judge_sends(server) == 18
    details = {e["id"]: e["error"] for e in results(out)["error_details"]}
    assert (
        "judge verdict unparsed" in details["vid2#0"]
        and "replies were not yes/no" in details["vid2#0"]
    )
    assert "judge verdict error: the judge call failed" in details["vid3#0"]  # the empty reply


def test_judge_modes_need_a_judge(dataset: Path, tmp_path: Path) -> None:
    args = ["--data", str(dataset), "--model", "random-choice", "--out", str(tmp_path / "r")]
    assert run("mmworld", *args, "--cache-dir", str(tmp_path / "cache")) == 2


# ---------------------------------------------------------------------------- runs, ablations
def test_runs_give_mean_and_std(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    args = ["--data", str(dataset), "--out", str(out), "--cache-dir", str(tmp_path / "cache")]
    assert run("mmworld:rule", "--model", "random-choice", "--runs", "3", *args) == 0
    res = results(out)
    assert res["runs"] == 3 and res["seeds"] == [0, 1, 2]
    per_run = [json.loads((out / f"run-{i}" / "results.json").read_text()) for i in (1, 2, 3)]
    assert [r["model_identity"]["seed"] for r in per_run] == [0, 1, 2]
    averages = [r["columns_unrounded"][AVERAGE] for r in per_run]
    mean = sum(averages) / 3
    spread = (sum((a - mean) ** 2 for a in averages) / 3) ** 0.5
    assert res["columns"][AVERAGE] == pytest.approx(mean)
    assert res["std"][AVERAGE] == pytest.approx(spread)
    assert list(res["std"]) == list(res["columns"])
    assert (
        f"{res['columns'][AVERAGE]:.1f} ± {res['std'][AVERAGE]:.1f}"
        in (out / "table.md").read_text()
    )
    # stages re-run on the saved runs (nothing new is inferred)
    assert run("--out", str(out), "--runs", "3", "--stage", "report") == 0
    assert results(out)["columns"] == res["columns"]


def _frames(out: Path, sample_id: str) -> list[int]:
    return [f["index"] for f in samples(out)[sample_id]["frames"]]


def test_temporal_ablations_change_the_frames(dataset: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    got = {}
    for variant in ("rule", "rule+shuffled", "rule+reduced", "rule+keyframes"):
        out = tmp_path / variant
        args = ["--data", str(dataset), "--out", str(out), "--cache-dir", cache]
        assert run(f"mmworld:{variant}", "--model", "random-choice", *args) == 0
        got[variant] = {sid: _frames(out, sid) for sid in ("vid0#0", "vid6#1")}
        assert results(out)["errors"] == 0
    uniform = [0, 5, 11, 16, 22, 27, 33, 39]  # np.linspace(0, 39, 8)
    assert got["rule"]["vid6#1"] == uniform
    # shuffled: the same frames in the seeded order (seed 0 gives 4, 1, 5, 2, 0, 3, 7, 6)
    assert got["rule+shuffled"]["vid6#1"] == [uniform[i] for i in (4, 1, 5, 2, 0, 3, 7, 6)]
    # reduced: 1/5 of 8 frames, rounded: 2, over the same span
    assert got["rule+reduced"]["vid6#1"] == [0, FRAMES - 1]
    # keyframes on vid0 (shots of 20, 6, 6 and 8 frames): every shot is represented
    picks = got["rule+keyframes"]["vid0#0"]
    assert len(picks) == 8 and picks == sorted(set(picks))
    shots = [sum(p >= b for b in (20, 26, 32)) for p in picks]
    assert set(shots) == {0, 1, 2, 3}
