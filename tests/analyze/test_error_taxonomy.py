"""`vidbench analyze errors`: every wrong answer of finished runs (MMWorld and 4D-Bench) tagged
by a scripted judge on the fake server, malformed replies included; stored, never asked again;
the table and the figure."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import AUTOEVAL
from mmworld_support import make_mmworld
from vidbench.analyze.error_table import print_errors
from vidbench.analyze.errors import ErrorSummary, parse_error_type
from vidbench.analyze.taxonomy import CODES, ERROR_TYPES
from vidbench.cli import main
from vidbench.core.files import read_jsonl
from vidbench.testing import Reply, request_text

JSON_REPLY = '{{"error_type": "{code}", "reason": "The model {why}."}}'


def test_parse_error_type() -> None:
    assert parse_error_type('{"error_type": "VPE", "reason": "It misread the chart."}') == (
        "VPE",
        "It misread the chart.",
    )
    fenced = '```json\n{"error_type": "Lack of Domain Knowledge", "reason": "x"}\n```'
    assert parse_error_type(fenced) == ("LDK", "x")
    assert parse_error_type("Error type: Reasoning Error. It inverted the cause.") == (
        "RE",
        "It inverted the cause",
    )
    assert parse_error_type("error_type = hallucinations") == ("HE", "")
    assert parse_error_type('{"error_type": "Bad Luck", "reason": "?"}') is None
    assert parse_error_type("I think the model was confused.") is None
    # the ways judges name a type beside its code, and markdown around it: the reason is the
    # reply's own, not the JSON's or the markdown's leftovers
    for named in ("Visual Perception Error (VPE)", "VPE - Visual Perception Error", ["VPE"]):
        reply = json.dumps({"error_type": named, "reason": "It misread."})
        assert parse_error_type(reply) == ("VPE", "It misread.")
    assert parse_error_type("Error Type: **Reasoning Error**\nReason: bad logic") == (
        "RE",
        "bad logic",
    )
    assert parse_error_type("**Error type:** Hallucination Error — made up a car") == (
        "HE",
        "made up a car",
    )
    # English words that are codes in lower case name no type inside a sentence
    assert parse_error_type('{"error_type": "none: he chose right", "reason": "x"}') is None
    assert [t.code for t in ERROR_TYPES] == ["QUE", "AUE", "VPE", "HE", "RE", "LDK", "RA"]


class ScriptedJudge:
    """Replies by question: a type per question number, some malformed; counts asks."""

    def __init__(self) -> None:
        self.asks: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        text = request_text(body)
        question = text.split("Question: ", 1)[1].splitlines()[0]
        self.asks[question] += 1
        number = re.search(r"\[q(\d+)\]|Question (\d+)", question)
        n = int(next(g for g in number.groups() if g)) if number else 99
        if n == 1:
            return "I would need to watch the video to say."  # never parses
        if n == 3 and self.asks[question] == 1:
            return "Hmm, let me think about it."  # parses on the second ask
        if n == 7:
            return Reply(http_status=400, error="bad request")  # the call fails
        if n == 9:
            return "Error type: Visual Perception Error. It saw the wrong object."
        return JSON_REPLY.format(code=CODES[n % len(CODES)], why=f"erred on question {n}")


def _run(task: str, data: Path, out: Path, model: str) -> Path:
    args = ["--no-progress", "run", task, "--data", str(data), "--model", model]
    assert main([*args, "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_mmworld_run_errors_tagged_and_stored(tmp_path: Path, fake) -> None:
    data = make_mmworld(tmp_path / "mmworld")
    run = _run("mmworld:rule", data, tmp_path / "run", "constant:a")
    samples = read_jsonl(run / "samples.jsonl")
    wrong = {s["id"] for s in samples if s["outcome"]["kind"] == "wrong"}
    # gold labels cycle over the options; "a" is right for questions 0, 4, 8, 10 (README's), 12
    assert sorted(_number(i, data) for i in wrong) == [1, 2, 3, 5, 6, 7, 9, 11, 13]
    judge = ScriptedJudge()
    server = fake(reply=judge)
    spec = f"openai-compat:{server.base_url}#judge"
    code = main(["--no-progress", "analyze", "errors", str(run), "--judge", spec])
    assert code == 3  # a judge call failed: incomplete, said so, asked again next time
    assert len(server.requests) == 3 + 2 + 1 + 6  # q1 three asks, q3 two, q7 one, six others
    lines = {_number(line["id"], data): line for line in read_jsonl(run / "errors.jsonl")}
    assert lines[1]["status"] == "unparsed" and lines[1]["attempts"] == 3
    assert lines[1]["error_type"] is None and "watch the video" in lines[1]["judge_reply"]
    assert (lines[3]["status"], lines[3]["attempts"], lines[3]["error_type"]) == ("ok", 2, "HE")
    assert lines[7]["status"] == "error" and "400" in lines[7]["error"]
    assert (lines[9]["error_type"], lines[9]["reason"]) == ("VPE", "It saw the wrong object")
    assert lines[2]["error_name"] == "Visual Perception Error"
    assert lines[2]["reason"] == "The model erred on question 2."
    assert (lines[5]["gold"], lines[5]["parsed"]) == ("c", "a")
    summary = json.loads((run / "errors.json").read_text())
    assert (summary["wrong"], summary["tagged"], summary["unparsed"]) == (9, 7, 1)
    assert summary["judge_errors"] == 1 and summary["not_scored"] == 0
    assert summary["counts"] == {
        "QUE": 0, "AUE": 0, "VPE": 2, "HE": 1, "RE": 1, "LDK": 1, "RA": 2
    }  # fmt: skip
    assert summary["usage"]["requests"] == 11  # stored replies (the failed call is not one)
    for suffix in ("md", "csv", "svg"):
        assert (run / f"error_types.{suffix}").stat().st_size > 0
    assert (run / "error_types.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # a rerun asks nothing answered again: only the failed call goes out
    server = fake(reply=judge)
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", spec]) == 3
    assert len(server.requests) == 1
    server = fake(reply=lambda body: JSON_REPLY.format(code="RE", why="x"))
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", spec]) == 0
    assert len(server.requests) == 1
    summary = json.loads((run / "errors.json").read_text())
    assert (summary["tagged"], summary["judge_errors"], summary["counts"]["RE"]) == (8, 0, 2)
    server = fake(reply=judge)
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", spec]) == 0
    assert server.requests == []


def _number(qid: str, data: Path) -> int:
    records = json.loads((data / "mmworld.json").read_text())
    video, _, index = qid.partition("#")
    text = next(r for r in records if r["video_id"] == video)["questions"][int(index)]["question"]
    found = re.search(r"\[q(\d+)\]", text)
    return int(found.group(1)) if found else 99


def test_several_runs_and_another_task(tmp_path: Path, fake, qa_release: Path) -> None:
    """4D-Bench QA (another multiple-choice task) beside MMWorld: one row per model."""
    fourd = _run("4dbench-qa", qa_release, tmp_path / "fourd", "constant:(A)")
    mmworld = _run("mmworld:rule", make_mmworld(tmp_path / "mm"), tmp_path / "mm-run", "constant:b")
    server = fake(reply=lambda body: JSON_REPLY.format(code="VPE", why="misread the frames"))
    spec = f"openai-compat:{server.base_url}#judge"
    out = tmp_path / "table"
    args = ["--no-progress", "analyze", "errors", str(fourd), str(mmworld), "--judge", spec]
    assert main([*args, "--out", str(out), "--with-frames"]) == 0
    fourd_wrong = [
        s for s in read_jsonl(fourd / "samples.jsonl") if s["outcome"]["kind"] == "wrong"
    ]
    assert len(fourd_wrong) == 15  # 20 questions, gold cycles A..D, the model always says A
    prompts = [request_text(r) for r in server.requests]
    assert sum("Question 0 about object 1" in p for p in prompts) == 1
    assert all(r["messages"][0]["content"][0]["type"] == "image_url" for r in server.requests)
    table = (out / "error_types.md").read_text().splitlines()
    assert table[0].startswith("| Model | Task | QUE | AUE | VPE |")
    assert "| constant:(A) | 4dbench-qa | 0 (0%) | 0 (0%) | 15 (100%) |" in table[2]
    assert table[3].startswith("| constant:b | mmworld:rule |")
    rows = (out / "error_types.csv").read_text().splitlines()
    assert rows[1].startswith("constant:(A),4dbench-qa,0,0,15,0,0,0,0,0.00,0.00,100.00")
    assert (out / "error_types.svg").read_text().count("<svg") == 1


def test_open_ended_task_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    out.mkdir()
    config = {"task": "autoeval-video", "data": str(AUTOEVAL), "model": "random", "out": str(out)}
    (out / "run.json").write_text(json.dumps(config))
    (out / "samples.jsonl").write_text("")
    code = main(["--no-progress", "analyze", "errors", str(out), "--judge", "constant:x"])
    assert code == 2
    assert "autoeval-video is not a multiple-choice task" in capsys.readouterr().err


def test_a_sample_gone_from_the_data_is_counted_and_runs_of_one_model_told_apart(
    tmp_path: Path, capsys
) -> None:
    """Two runs of one model name (rows told apart by folder); one run's data lost a video
    since: its wrong answers used to drop out of `wrong` without a word (exit 0)."""
    runs = []
    for name in ("a", "b"):
        data = make_mmworld(tmp_path / f"data-{name}")
        runs.append(_run("mmworld:rule", data, tmp_path / name, "constant:a"))
    records = json.loads((data / "mmworld.json").read_text())
    gone = next(r for r in records if r["video_id"] == "eng_vid1")
    (data / "mmworld.json").write_text(json.dumps([r for r in records if r is not gone]))
    judge = "constant:" + JSON_REPLY.format(code="RE", why="erred")
    out = tmp_path / "table"
    args = ["--no-progress", "analyze", "errors", *map(str, runs), "--judge", judge]
    assert main([*args, "--out", str(out)]) == 3
    said = capsys.readouterr().err
    assert "1 wrong answer(s) not typed: their samples in the run's data are gone" in said
    assert "eng_vid1#1" in said
    summary = json.loads((runs[1] / "errors.json").read_text())
    assert summary["missing_samples"] == ["eng_vid1#1"]
    assert (summary["wrong"], summary["tagged"]) == (9, 8)  # 9 wrong, as in run a
    table = (out / "error_types.md").read_text().splitlines()
    assert table[2].startswith(f"| constant:a ({runs[0]}) | mmworld:rule | 0 (0%) |")
    assert table[2].endswith("| 9 | 0 | 0 | 9 | 0 |")
    assert table[3].startswith(f"| constant:a ({runs[1]}) |") and table[3].endswith(
        "| 8 | 0 | 1 | 9 | 0 |"
    )


def test_an_incomplete_run_says_how_many_samples_it_did_not_score(tmp_path: Path, fake) -> None:
    """The model's call failed on one question: its wrong answers are of the samples scored,
    and the row says how many were not (the table used to look like a complete run's)."""
    refused = Reply(http_status=400, error="bad request")
    server = fake(reply=lambda body: refused if "[q2]" in request_text(body) else "(a)")
    data = make_mmworld(tmp_path / "data")
    run = tmp_path / "run"
    args = ["--no-progress", "run", "mmworld:rule", "--data", str(data), "--out", str(run)]
    assert main([*args, "--model", f"openai-compat:{server.base_url}#m"]) == 3
    judge = "constant:" + JSON_REPLY.format(code="RE", why="erred")
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", judge]) == 0
    row = (run / "error_types.md").read_text().splitlines()[2]
    assert row.endswith("| 8 | 0 | 0 | 8 | 1 |")  # q2 (wrong for "a") is not scored
    assert (run / "error_types.csv").read_text().splitlines()[1].endswith(f",8,0,0,8,1,{run}")
    legend = " ".join(re.findall(r"<!-- (.*?) -->", (run / "error_types.svg").read_text()))
    assert "#m (n=8, run incomplete: 1 not scored)" in legend  # the figure says it too


def test_the_printed_table_is_whole_in_a_log() -> None:
    """Printed to a pipe or a log (80 columns), every cell was cut to "ra…", "(0…"."""
    summary: ErrorSummary = {
        "run": "runs/a", "task": "mmworld:rule", "model": "openai-compat:qwen2-vl-72b-instruct",
        "judge": {}, "wrong": 3, "tagged": 3, "counts": dict.fromkeys(CODES, 0) | {"VPE": 3},
        "unparsed": 0, "judge_errors": 0, "media_errors": 0, "not_scored": 0,
        "missing_samples": [], "changed_samples": [], "usage": {},
    }  # fmt: skip
    buffer = io.StringIO()
    print_errors([summary], Console(file=buffer, width=80))
    assert "…" not in buffer.getvalue() and "3 (100%)" in buffer.getvalue()
    assert "openai-compat:qwen2-vl-72b" in buffer.getvalue()  # wrapped, not cut
    assert "│ -instruct " in buffer.getvalue()


def test_a_run_given_its_data_by_a_relative_name_is_analysed_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json keeps `--data` as given ("data"); analysing the run from another folder read
    that name from there (no such folder: exit 2; a folder of that name: other questions)."""
    make_mmworld(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    run = _run("mmworld:rule", Path("data"), tmp_path / "run", "constant:a")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    judge = "constant:" + JSON_REPLY.format(code="RE", why="erred")
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", judge]) == 0
    assert json.loads((run / "errors.json").read_text())["tagged"] == 9


def test_a_wrong_answer_whose_sample_changed_since_is_never_judged(
    tmp_path: Path, capsys, fake
) -> None:
    """A question reworded, and a gold fixed, after the run: the judge was shown the new
    question (or gold) beside the model's answer to the old one, and typed its "error"."""
    data = make_mmworld(tmp_path / "data")
    run = _run("mmworld:rule", data, tmp_path / "run", "constant:a")
    records = json.loads((data / "mmworld.json").read_text())
    reworded = records[1]["questions"][1]  # vid1#1, answered wrong
    reworded["question"] = reworded["question"] + " (reworded)"
    regold = records[1]["questions"][0]  # vid1#0, answered wrong: now "a" is right
    regold["correct_answer_label"], regold["answer"] = "a", regold["options"]["a"]
    (data / "mmworld.json").write_text(json.dumps(records))
    server = fake(reply=lambda body: JSON_REPLY.format(code="RE", why="erred"))
    spec = f"openai-compat:{server.base_url}#judge"
    assert main(["--no-progress", "analyze", "errors", str(run), "--judge", spec]) == 3
    assert "2 wrong answer(s) not typed: their samples in the run's data changed" in (
        capsys.readouterr().err
    )
    summary = json.loads((run / "errors.json").read_text())
    assert summary["changed_samples"] == ["vid1#0", "vid1#1"]
    assert (summary["wrong"], summary["tagged"]) == (9, 7)
    assert not any("(reworded)" in request_text(r) for r in server.requests)


def test_a_folder_of_repeated_runs_stands_for_its_runs(tmp_path: Path) -> None:
    """The MMWorld README's `vidbench analyze errors results/gpt-4o-kf` (a `--runs N` folder):
    "no run.json; run the infer stage first"."""
    data = make_mmworld(tmp_path / "data")
    out = tmp_path / "runs"
    args = ["--no-progress", "run", "mmworld:rule", "--data", str(data), "--model", "random"]
    assert main([*args, "--runs", "2", "--out", str(out)]) == 0
    judge = "constant:" + JSON_REPLY.format(code="RE", why="erred")
    assert main(["--no-progress", "analyze", "errors", str(out), "--judge", judge]) == 0
    table = (out / "error_types.md").read_text().splitlines()
    assert table[2].startswith(f"| random ({out / 'run-1'}) |")
    assert table[3].startswith(f"| random ({out / 'run-2'}) |") and len(table) == 4
    # a file is no folder of runs: named, not an empty table
    (tmp_path / "a-file").write_text("x")
    assert main(["analyze", "errors", str(tmp_path / "a-file"), "--judge", judge]) == 2
