"""`predictions:FILE.jsonl`: answers made elsewhere go through the same judge, score and report
stages as a model's, with no frame decoded, and agree with the dedicated command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autoeval_support import PREDICTIONS, RULES, judge_args, judging, vidbench
from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.report.results_dir import ResultsDir
from vidbench.testing import ChatServer


def test_fourd_answers_from_a_file_scored_without_videos(tmp_path: Path, qa_release: Path) -> None:
    data = tmp_path / "release"
    shutil.copytree(qa_release, data)
    shutil.rmtree(data / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos")
    samples = fourd_bench.load_qa(data).items
    assert len(samples) == 20
    lines = []
    for i, sample in enumerate(samples[:-1]):  # the last sample has no line
        letter = sample.answer if i % 2 == 0 else next(c for c in "ABCD" if c != sample.answer)
        id_field = "ID" if i % 3 else "id"  # the accepted spellings
        answer_field = "prediction" if i % 5 else "answer"
        lines.append(json.dumps({id_field: sample.id, answer_field: f"({letter})"}))
    lines.insert(4, "{not json")
    answers = tmp_path / "human.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    # one sample has no answer: the results are written, and not complete
    assert (
        vidbench(
            "run", "4dbench-qa", "--data", data, "--model", f"predictions:{answers}", "--out", out
        )
        == EXIT_INCOMPLETE
    )
    results = ResultsDir(out).read_results()
    assert results.n == 20 and results.errors == 1
    [detail] = results.error_details
    assert detail.id == samples[-1].id
    assert str(answers) in detail.error and "line 5: malformed JSON" in detail.error
    # 10 of the 19 answered are right; the unanswered one is an error, outside the columns
    assert results.columns["Overall"] == pytest.approx(100 * 10 / 19)
    assert results.model == "predictions:human.jsonl" and (results.model_identity or {})["digest"]

    answers.write_text(answers.read_text().replace(f'"{samples[0].id}"', '"other"'))
    assert vidbench("run", "4dbench-qa", "--data", data, "--model", f"predictions:{answers}",
                    "--out", out) == EXIT_INCOMPLETE  # fmt: skip
    assert ResultsDir(out).read_results().errors == 2  # a changed file is read again


@pytest.mark.slow
def test_autoeval_predictions_run_agrees_with_judge_command(tmp_path: Path) -> None:
    def reply(body: dict) -> str:
        text = body["messages"][0]["content"]
        return "Reason.\n1" if len(text) % 3 else "Reason.\n0"

    with ChatServer(reply=reply) as server:
        assert vidbench(*judging(server), "--out", tmp_path / "command") == 0
        asked = len(server.requests)
        assert vidbench("run", "autoeval-video", "--data", RULES.parent, "--model",
                        f"predictions:{PREDICTIONS}", "--out", tmp_path / "run",
                        *judge_args(server)) == 0  # fmt: skip
    by_command = ResultsDir(tmp_path / "command").read_results()
    by_run = ResultsDir(tmp_path / "run").read_results()
    assert by_run.n == by_command.n == 327
    assert by_run.columns == by_command.columns
    assert asked == 327


def test_a_file_saved_with_a_bom_and_crlf_is_read_whole(tmp_path: Path) -> None:
    # Notepad and Excel start UTF-8 text with a byte order mark; its first line was "malformed"
    from audit_support import ROWS, TOML
    from custom_support import make_bench, samples

    bench = make_bench(tmp_path / "bench", toml=TOML, rows=ROWS[:4])
    lines = [json.dumps({"id": row["n"], "answer": row["answer"]}) for row in ROWS[:4]]
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    out = tmp_path / "out"
    assert (
        vidbench("run", f"custom:{bench}", "--model", f"predictions:{answers}", "--out", out) == 0
    )
    assert [row["status"] for row in samples(out).values()] == ["ok"] * 4
    assert ResultsDir(out).read_results().columns["Overall"] == 100.0


def test_an_id_given_again_with_another_answer_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last line of a repeated id is used (a resumed job appends), but where it changes the
    answer the run says so, once, naming the id and both lines."""
    from audit_support import ROWS, TOML
    from custom_support import make_bench, samples

    bench = make_bench(tmp_path / "bench", toml=TOML, rows=ROWS[:4])
    lines = [json.dumps({"id": row["n"], "answer": row["answer"]}) for row in ROWS[:4]]
    wrong = "B" if ROWS[0]["answer"] != "B" else "C"
    lines += [json.dumps({"id": ROWS[0]["n"], "answer": wrong}), lines[1]]  # changed, same
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert (
        vidbench("run", f"custom:{bench}", "--model", f"predictions:{answers}", "--out", out) == 0
    )
    said = " ".join(capsys.readouterr().err.split())
    assert said.count("given again with another answer") == 1
    assert f"1 id given again with another answer: {ROWS[0]['n']} (lines 1 and 5)" in said
    assert "the last line of each is used" in said and ROWS[1]["n"] + " (lines" not in said
    assert samples(out)[ROWS[0]["n"]]["parsed"] == wrong
