"""The advice after calls the API rejected (a rerun as it is gets the same answer): what to change
first comes from the store (models/retry.py decided it when the call failed), never read back out
of a message the server wrote part of; the score stage alone says the same as a whole run; a
store made before the column still gives it."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import make_qa_dataset
from mmworld_support import JUDGE_MARK, make_mmworld, records
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.models.retry import CHANGE_KEY, CHANGE_REQUEST, CHANGE_SIZE
from vidbench.runner.store import Store
from vidbench.testing import ChatServer, Reply, request_text

# a server's own words that say "change" before the run's advice in the message
TALKATIVE = "Invalid request: you cannot change the temperature of this model"


@pytest.fixture(autouse=True)
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _advice(capsys: pytest.CaptureFixture[str]) -> str:
    said = " ".join(capsys.readouterr().err.split())  # the console wraps long lines
    found = re.search(r"incomplete: .*", said)
    assert found is not None, said
    return found.group(0)


def _question_0_fails(status: int, message: str) -> Any:
    def reply(body: dict[str, Any]) -> str | Reply:
        if "Question 0 about object" in request_text(body):
            return Reply(http_status=status, error=message)
        return "(A)"

    return reply


def _run_qa(fake: Any, tmp_path: Path, status: int, message: str) -> tuple[list[str], Path]:
    server = fake(reply=_question_0_fails(status, message))
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    model = f"openai-compat:{server.base_url}#fake"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", model]
    out = tmp_path / "out"
    argv += ["--out", str(out), "--cache-dir", str(tmp_path / "cache")]
    return [*argv, "--model-opt", "backoff=0.01", "--model-opt", "max_retries=0"], out


@pytest.mark.parametrize(
    ("status", "message", "change"),
    [
        (400, TALKATIVE, CHANGE_REQUEST),
        (401, "Incorrect API key provided", CHANGE_KEY),
        (413, "request_too_large", CHANGE_SIZE),
    ],
)
def test_a_rejected_call_says_what_to_change_and_the_score_stage_alone_says_the_same(
    fake: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
    message: str,
    change: str,
) -> None:
    argv, out = _run_qa(fake, tmp_path, status, message)
    capsys.readouterr()
    assert main(argv) == EXIT_INCOMPLETE
    whole = _advice(capsys)
    assert f"change first {change} (" in whole  # a 400 read its advice out of the server's words
    results = json.loads((out / "results.json").read_text())
    rejected = [e for e in results["error_details"] if e["status"] == "rejected"]
    assert rejected and all(e["change_first"] == change for e in rejected)

    for stage in ("score", "report"):  # each alone, from the stored answers and rows
        alone = ["--no-progress", "run", "--out", str(out), "--stage", stage]
        assert main(alone) == EXIT_INCOMPLETE
        assert _advice(capsys) == whole  # score was: "... the same command again does not ..."


def test_a_store_made_before_the_column_gives_the_same_advice(
    fake: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, out = _run_qa(fake, tmp_path, 400, TALKATIVE)
    assert main(argv) == EXIT_INCOMPLETE
    whole = _advice(capsys)
    with sqlite3.connect(out / Store.FILENAME) as db:  # as a vidbench before the column made it
        db.execute("ALTER TABLE failures DROP COLUMN change_first")
    plan = json.loads((out / "results.json").read_text())["plan"]
    with Store.read_only(out) as store:  # vidbench view: read as it is, nothing changed
        failed = store.last_failures(plan)
        assert [(f.status, f.change_first) for f in failed.values()] == [("rejected", None)]
    assert main(["--no-progress", "run", "--out", str(out), "--stage", "score"]) == EXIT_INCOMPLETE
    assert _advice(capsys) == whole  # the column added, filled from the messages once
    with sqlite3.connect(out / Store.FILENAME) as db:
        kept = db.execute("SELECT change_first FROM failures WHERE status = 'rejected'")
        assert [row[0] for row in kept] == [CHANGE_REQUEST]
    assert main(argv) == EXIT_INCOMPLETE  # asked again, and stored with the column
    assert _advice(capsys) == whole


def test_a_rejected_judge_call_says_what_to_change_not_that_the_next_judge_stage_asks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = {q["question"]: q["correct_answer_label"] for r in records() for q in r["questions"]}

    def reply(body: dict[str, Any]) -> str | Reply:
        text = request_text(body)
        if JUDGE_MARK in text:
            return Reply(http_status=400, error=TALKATIVE)
        return next(label for question, label in gold.items() if question in text)

    data = make_mmworld(tmp_path / "mmworld")
    with ChatServer(reply=reply) as server:
        model, judge = (f"openai-compat:{server.base_url}#{name}" for name in ("m", "j"))
        argv = ["--no-progress", "run", "mmworld", "--data", str(data), "--model", model]
        argv += ["--judge", judge, "--limit", "2", "--out", str(tmp_path / "r")]
        argv += ["--cache-dir", str(tmp_path / "cache"), "--judge-opt", "max_retries=0"]
        capsys.readouterr()
        assert main(argv) == EXIT_INCOMPLETE
        said = " ".join(capsys.readouterr().err.split())
        whole = re.search(r"incomplete: .*", said)
        assert main([*argv, "--stage", "judge"]) == EXIT_INCOMPLETE  # was: "... to retry"
        assert whole is not None and _advice(capsys) == whole.group(0)
    assert f"change first {CHANGE_REQUEST} (2)" in said
    assert "no verdict; run the judge stage again" not in said  # none a new judge stage decides
    assert json.loads((tmp_path / "r" / "results.json").read_text())["unjudged"] == 0  # was 2
    rows = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").open()]
    assert [row["change_first"] for row in rows] == [CHANGE_REQUEST] * 2
    for row in rows:
        assert "the next judge stage asks again" not in row["status_detail"]
        assert "a rerun alone does not help" in row["status_detail"]
        assert f"change {CHANGE_REQUEST} first" in row["status_detail"]
