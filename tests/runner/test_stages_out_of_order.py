"""Stages run alone, out of order, or over a results folder edited by hand: the report stage
shows the rows of this run's configuration or says why it cannot, never another run's rows
under this run's name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from custom_support import ISSUE_TOML, ROWS, make_bench, write_rows
from mmworld_support import judge_sends, make_mmworld, scripted_server
from vidbench.cli import main
from vidbench.core.errors import EXIT_CONFIG, EXIT_INCOMPLETE, EXIT_OK


def _run(*argv: str) -> int:
    return main(["--no-progress", "run", *argv])


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())  # the console wraps long lines


def test_the_report_stage_never_shows_rows_scored_for_another_configuration(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = str(tmp_path / "r"), str(qa_release)
    assert _run("4dbench-qa", "--data", data, "--model", "random", "--out", out) == EXIT_OK
    # another model's answers stored, not scored: its report showed random's rows as its own,
    # and audit, predictions and view read random's rows beside run.json's constant:A
    infer = ("4dbench-qa", "--data", data, "--model", "constant:A", "--out", out)
    assert _run(*infer, "--stage", "infer") == EXIT_OK
    assert "held the results of another configuration: removed samples.jsonl" in _said(capsys)
    assert not (tmp_path / "r" / "samples.jsonl").exists()
    assert not (tmp_path / "r" / "results.json").exists()
    assert _run("--out", out, "--stage", "report") == EXIT_CONFIG
    assert "no score stage finished writing" in _said(capsys)
    assert _run("--out", out, "--stage", "score") == EXIT_OK
    assert _run("--out", out, "--stage", "report") == EXIT_OK
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["model"] == "constant:A" and results["n"] == 20


def test_the_report_stage_says_when_answers_came_after_the_rows_were_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = make_bench(tmp_path / "bench")
    clip = bench / "videos" / "clip2.mp4"
    kept = clip.rename(tmp_path / "clip2.mp4")  # its rows cannot be asked: incomplete
    argv = (f"custom:{bench}", "--model", "random", "--out", str(tmp_path / "r"))
    assert _run(*argv) == EXIT_INCOMPLETE
    kept.rename(clip)  # the video is back: the infer stage alone asks its rows
    assert _run(*argv, "--stage", "infer") == EXIT_OK
    capsys.readouterr()
    assert _run("--out", str(tmp_path / "r"), "--stage", "report") == EXIT_CONFIG
    assert "before the store got more answers" in _said(capsys)


def test_the_report_stage_alone_under_another_variant_says_to_score_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TASK variant given to the report stage alone reported the rows scored under the old
    one as the new variant's."""
    bench = make_bench(tmp_path / "bench")
    out = str(tmp_path / "r")
    assert _run(f"custom:{bench}", "--model", "random", "--out", out) == EXIT_OK
    capsys.readouterr()
    assert _run(f"custom:{bench}:option-text", "--out", out, "--stage", "report") == EXIT_CONFIG
    assert "was scored under another task variant" in _said(capsys)


def test_the_report_stage_refuses_samples_edited_by_hand(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    argv = ("4dbench-qa", "--data", str(qa_release), "--model", "random", "--out", str(out))
    assert _run(*argv) == EXIT_OK
    rows = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(rows[:-3]))  # whole lines cut: still valid JSON
    (out / "results.json").unlink()
    capsys.readouterr()
    assert _run("--out", str(out), "--stage", "report") == EXIT_CONFIG
    assert "not the file the score stage wrote" in _said(capsys)
    assert not (out / "results.json").exists()  # no results over 17 of 20 rows
    assert _run("--out", str(out), "--stage", "score") == EXIT_OK
    assert _run("--out", str(out), "--stage", "report") == EXIT_OK
    assert json.loads((out / "results.json").read_text())["n"] == 20
    # the results files copied without the store: reported as they are (no count to check)
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("run.json", "samples.jsonl", "usage.json", "scored.json"):
        shutil.copy(out / name, copy / name)
    assert _run("--out", str(copy), "--stage", "report") == EXIT_OK


def test_a_judge_stage_alone_says_which_samples_have_no_answer_to_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge stage of a run whose infer stage never ran (or stopped) judged nothing and
    exited 0."""
    data = make_mmworld(tmp_path / "mmworld")
    with scripted_server({}) as server:
        model, judge = (f"openai-compat:{server.base_url}#{name}" for name in ("m", "j"))
        argv = ("mmworld", "--data", str(data), "--model", model, "--judge", judge)
        out = ("--out", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "cache"))
        assert _run(*argv, *out, "--stage", "judge") == EXIT_INCOMPLETE
        assert "some samples were never asked" in _said(capsys)
        assert _run(*argv, *out, "--stage", "infer", "--limit", "4") == EXIT_OK
        assert _run(*argv, *out, "--stage", "judge", "--limit", "4") == EXIT_OK  # all 4 judged
        assert judge_sends(server) == 4


def test_a_local_models_timing_is_not_reported_for_the_next_model(
    qa_release: Path, tmp_path: Path
) -> None:
    """timing.json outlived a rerun by a model that keeps no timing: results.json gave the
    other model's device seconds and share as this one's."""
    out, data = str(tmp_path / "r"), str(qa_release)
    timed = ("4dbench-qa", "--data", data, "--out", out, "--model", "python:support_models:Timed")
    assert _run(*timed) == EXIT_OK
    assert json.loads((tmp_path / "r" / "results.json").read_text())["timing"]["batches"] > 0
    assert _run("4dbench-qa", "--data", data, "--model", "constant:A", "--out", out) == EXIT_OK
    assert json.loads((tmp_path / "r" / "results.json").read_text()).get("timing") is None
    assert _run(*timed) == EXIT_OK  # all reused: its timing is the one kept
    assert json.loads((tmp_path / "r" / "results.json").read_text())["timing"]["batches"] > 0


def test_a_score_stage_alone_leaves_no_results_of_the_rows_it_replaced(tmp_path: Path) -> None:
    """Re-scored under another parser and not reported: results.json and the tables still gave
    the old parser's figures beside the new rows (what `view` and `report` then showed)."""
    bench = make_bench(tmp_path / "bench")
    out = tmp_path / "r"
    assert _run(f"custom:{bench}", "--model", "random", "--out", str(out)) == EXIT_OK
    assert _run(f"custom:{bench}:option-text", "--out", str(out), "--stage", "score") == EXIT_OK
    assert not (out / "results.json").exists() and not (out / "table.md").exists()
    assert _run("--out", str(out), "--stage", "report") == EXIT_OK
    assert json.loads((out / "results.json").read_text())["task"].endswith(":option-text")


def test_options_a_stored_run_decides_are_not_ignored_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--stage score --limit 2` scored every sample, `--stage judge --concurrency 2` sent the
    judge's calls 16 at a time: the stored run.json's values, the options given unread."""
    bench = make_bench(tmp_path / "bench")
    out = tmp_path / "r"
    assert _run(f"custom:{bench}", "--model", "random", "--out", str(out)) == EXIT_OK
    rows = (out / "samples.jsonl").read_bytes()
    capsys.readouterr()
    assert _run("--out", str(out), "--stage", "score", "--limit", "2") == EXIT_CONFIG
    assert "--limit: the score stage of the run stored in" in _said(capsys)
    assert _run("--out", str(out), "--stage", "report", "--frames", "2") == EXIT_CONFIG
    assert (out / "samples.jsonl").read_bytes() == rows
    assert _run("--out", str(out), "--stage", "score", "--concurrency", "2") == EXIT_OK
    assert json.loads((out / "run.json").read_text())["concurrency"] == 2  # this command's


def test_an_answer_to_an_old_prompt_is_not_scored_when_asking_the_new_one_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field the prompt shows (not one the data's identity holds) edited between runs: the
    rerun asks the new prompt; when that call failed, the answer to the old prompt was scored as
    the sample's, and a score stage later gave results that looked complete."""
    toml = ISSUE_TOML + 'prompt = "Room: {domain}. {question}\\n{options}"\n'
    bench = make_bench(tmp_path / "bench", toml)
    argv = (f"custom:{bench}", "--model", "python:support_models:FailsOnMark")
    out = ("--out", str(tmp_path / "r"))
    assert _run(*argv, *out) == EXIT_OK
    rows = [{**row, "domain": "kitchen [fail]"} if i == 0 else row for i, row in enumerate(ROWS)]
    write_rows(bench / "questions.jsonl", rows)  # row 0's prompt changes, not its identity
    assert _run(*argv, *out) == EXIT_INCOMPLETE
    assert "run the same command again to retry" in _said(capsys)
    assert _run(*out, "--stage", "score") == EXIT_INCOMPLETE
    row = next(
        r for r in map(json.loads, (tmp_path / "r" / "samples.jsonl").open()) if r["status"] != "ok"
    )
    assert row["status"] == "error" and "failed on purpose" in row["error"]


def test_the_report_stage_and_view_say_when_a_prompt_field_was_edited_after_scoring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field only the prompt shows (the question, gold and videos unchanged), edited after the
    score stage: report and view presented the scores of the old prompts as current."""
    from vidbench.view.collect import collect_run

    toml = ISSUE_TOML + 'prompt = "{question}\\nHint: {hint}\\n{options}"\n'
    rows = [{**row, "hint": "look at the start"} for row in ROWS]
    bench, out = make_bench(tmp_path / "bench", toml, rows), str(tmp_path / "r")
    argv = (f"custom:{bench}", "--model", "random", "--out", out)
    assert _run(*argv, "--stage", "infer") == EXIT_OK
    assert _run("--out", out, "--stage", "score") == EXIT_OK
    assert _run("--out", out, "--stage", "report") == EXIT_OK
    assert collect_run(tmp_path / "r").messages == []
    write_rows(bench / "questions.jsonl", [*rows[:5], {**rows[5], "hint": "look at the end"}])
    capsys.readouterr()
    assert _run("--out", out, "--stage", "report") == EXIT_CONFIG
    said = _said(capsys)
    assert f"the data in {bench} changed since the score stage" in said
    assert f"from the infer stage (vidbench run custom:{bench} --model random --out" in said
    viewed = collect_run(tmp_path / "r")
    (note,) = viewed.messages
    assert "changed since the score stage" in note
    assert viewed.results is not None and viewed.results.stale == note.partition(": ")[2]
    # the table command printed the old results.json as current, exit 0
    assert main(["report", out, "--out", str(tmp_path / "t")]) == EXIT_INCOMPLETE
    printed = capsys.readouterr()
    table, said = " ".join(printed.out.split()), " ".join(printed.err.split())
    assert "stale: its data changed since it was scored" in table
    assert "1 of 1 run(s) stale" in said and f"the data in {bench} changed" in said
    assert "stale" in (tmp_path / "t" / "table.md").read_text()
    assert main(["figures", f"{out}/results.json", "--out", str(tmp_path / "f")]) == EXIT_INCOMPLETE
    assert _run(*argv) == EXIT_OK  # asks the changed row again, scores and reports
    assert "1 answered, 5 reused" in _said(capsys)
    assert _run("--out", out, "--stage", "report") == EXIT_OK
    assert collect_run(tmp_path / "r").messages == []
    assert main(["report", out]) == EXIT_OK
    assert "stale" not in capsys.readouterr().out


def test_report_marks_a_repeated_runs_mean_stale_when_its_data_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--runs N` folder's results.json (the mean) has no scored.json of its own: its runs'
    data edited since, `vidbench report` showed the mean as current."""
    bench, out = make_bench(tmp_path / "bench"), str(tmp_path / "rr")
    assert _run(f"custom:{bench}", "--model", "random", "--out", out, "--runs", "2") == EXIT_OK
    assert main(["report", out]) == EXIT_OK
    write_rows(bench / "questions.jsonl", [*ROWS[:5], {**ROWS[5], "question": "edited?"}])
    capsys.readouterr()
    assert main(["report", out]) == EXIT_INCOMPLETE
    assert "stale" in capsys.readouterr().out
