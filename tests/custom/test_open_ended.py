"""Open-ended declared benchmarks: exact, contains and regex matching against the rows' accepted
answers, and an LLM judge with a rubric per row in AutoEval-Video's rule style (on the fake
chat server): asked once per answer, re-asked when its verdict is unreadable, stored."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_support import make_bench, predictions, results, samples, vidbench
from vidbench.testing import ChatServer, Reply, request_text

OPEN = """name = "pets"
rows = "questions.jsonl"
video = "videos/{clip}.mp4"
kind = "open-ended"
answer = "answer"
groups = ["room"]
"""
RULE = (
    "[Question]: What animal is on the sofa?\n[Answer to be judged]:\n"
    "Correct only if it says a cat.\n"
)


def row(n: int, clip: int, question: str, answer: object, room: str, rubric: str) -> dict:
    return {"id": f"q{n}", "clip": f"clip{clip}", "question": question, "answer": answer} | {
        "room": room,
        "rubric": rubric,
    }


ROWS = [
    row(1, 0, "What animal is this?", ["cat", "kitten"], "hall", "Any cat counts."),
    row(2, 1, "What is on the table?", "a red cup", "hall", "The colour must be right."),
    row(3, 2, "How many chairs?", "(?i)^\\s*(4|four)\\b", "kitchen", "Exactly four."),
    row(4, 0, "What animal is on the sofa?", "", "kitchen", RULE),
]
REPLIES = {"q1": "A small kitten.", "q2": "A red cup", "q3": "four chairs", "q4": "garbage"}


@pytest.mark.parametrize(
    ("scoring", "right"),
    [("exact", {"q2"}), ("contains", {"q1", "q2"}), ("regex", {"q1", "q3"})],
)
def test_exact_contains_regex(tmp_path: Path, scoring: str, right: set[str]) -> None:
    rows = [r for r in ROWS if r["id"] != "q4"]
    folder = make_bench(tmp_path / "bench", OPEN + f'scoring = "{scoring}"\n', rows)
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out) == 0
    assert {i for i, r in samples(out).items() if r["outcome"]["kind"] == "correct"} == right
    assert results(out)["scoring"] == {"method": scoring, "no_gold": 0}


def _judge(body: dict) -> str:
    """A scripted judge: right when the judged answer names a cat or a red cup; no verdict at
    all for "garbage"."""
    text = request_text(body)
    fenced = re.search(r"<answer (\w+)>\n(.*?)\n</answer \1>", text, re.DOTALL)  # judge.v2
    answer = fenced.group(2) if fenced else re.search(r"\[Answer to be judged\]: (.*)", text)[1]
    if "garbage" in answer:
        return "I cannot judge this."
    good = "cat" in answer or "kitten" in answer or "red cup" in answer
    return f"The answer {'follows' if good else 'breaks'} the rules.\n{int(good)}"


def test_a_judge_with_a_rubric_per_row(
    tmp_path: Path, fake: Callable[..., ChatServer], capsys: pytest.CaptureFixture
) -> None:
    toml = OPEN + 'scoring = "judge"\nrubric = "rubric"\n'
    folder = make_bench(tmp_path / "bench", toml, ROWS)
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out) == 2
    assert "needs an LLM judge: give --judge SPEC" in " ".join(capsys.readouterr().err.split())

    server = fake(reply=_judge)
    judge = ["--judge", f"openai-compat:{server.base_url}#judge", "--judge-opt", "backoff=0.01"]
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out, *judge) == 0
    prompts = [request_text(r) for r in server.requests]
    assert len(prompts) == 3 + 3  # one per answer, and q4's unreadable verdict asked 3 times
    assert any(
        "[Rules]: The colour must be right." in p and "[Reference answer]: a red cup" in p
        for p in prompts
    )
    autoeval_style = "[Question]: What animal is on the sofa?\n[Answer to be judged]: garbage\n"
    assert sum(p.startswith(autoeval_style) for p in prompts) == 3
    rows = samples(out)
    assert {i: r["outcome"]["kind"] == "correct" for i, r in rows.items()} == {
        "q1": True,
        "q2": True,
        "q3": False,
        "q4": False,
    }
    assert rows["q4"]["unparsed"] is True and rows["q1"]["details"]["verdict"] == 1
    found = results(out)
    assert found["columns"] == {"Overall": 50.0, "hall": 100.0, "kitchen": 0.0}
    assert found["unparsed"] == 1

    server.reset(reply=_judge)  # the verdicts are stored: a rerun asks the judge nothing
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out, *judge) == 0
    assert server.requests == []


def test_a_failed_judge_call_is_an_error_the_next_run_asks_again(
    tmp_path: Path, fake: Callable[..., ChatServer]
) -> None:
    folder = make_bench(tmp_path / "bench", OPEN + 'scoring = "judge"\nrubric = "rubric"\n', ROWS)
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)

    def failing_on_q2(body: dict) -> str | Reply:
        if "a red cup" in request_text(body):
            return Reply(http_status=500, error="scripted server error")  # a rerun may help
        return _judge(body)

    server = fake(reply=failing_on_q2)
    judge = ["--judge", f"openai-compat:{server.base_url}#judge", "--judge-opt", "backoff=0.01"]
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out, *judge) == 3
    found = results(out)
    assert found["errors_by_status"] == {"judge": 1} and found["unjudged"] == 1
    assert samples(out)["q2"]["verdict_absent"] is True

    server.reset(reply=_judge)  # the next run asks the failed call again, and only it
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out, *judge) == 0
    assert len(server.requests) == 1 and results(out)["columns"]["Overall"] == 50.0
