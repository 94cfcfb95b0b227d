"""A reply that stopped at its token limit, end to end on the fake chat server: the store keeps
that it was cut (calls and responses), a judge's such reply is never a verdict (a reply cut
right after "1" or "yes" would read as one) and is not asked again, and a cut answer is scored
as it is but marked in its sample row and counted in results.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mmworld_support import JUDGE_MARK, make_mmworld, records
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.core.messages import user
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.model_calls import CallTally, ask_model, describe_verdicts
from vidbench.runner.store import Store
from vidbench.scoring.model_call import ModelCall
from vidbench.testing import ChatServer, Reply, request_text


def _digit(reply: str) -> int | None:
    return int(reply.strip()) if reply.strip().isdigit() else None


def test_a_judge_reply_cut_after_a_verdict_line_is_unread_and_not_asked_again(
    fake, tmp_path: Path
) -> None:
    def reply(body: dict[str, Any]) -> str | Reply:
        return Reply(text="1", truncated=True) if "cut" in request_text(body) else "0"

    server = fake(reply=reply)
    judge = load_model(
        f"openai-compat:{server.base_url}#judge", ModelOptions(extra={"backoff": "0.01"})
    )
    calls = [ModelCall(i, (user(f"judge {i}"),), "v1", _digit) for i in ("cut", "whole")]
    with Store(tmp_path) as store:
        results = ask_model(judge, calls, store, max_attempts=3)
        again = ask_model(judge, calls, store, max_attempts=3)
        kept = {call.item: call.truncated for call in store.all_calls()}
    cut = results["cut"]
    assert (cut.status, cut.value, cut.reply, cut.truncated) == ("unparsed", None, "1", True)
    assert "token limit" in cut.why_unread("not a digit")
    assert (results["whole"].status, results["whole"].value) == ("ok", 0)
    assert again["cut"] == cut.__class__(**{**cut.__dict__, "asked": 0})  # read back alike
    assert server.stats().received == 2  # the cut call once: asking again would cut again
    assert kept == {"cut": True, "whole": False}
    tally = CallTally.of(results.values())
    assert "1 unparsed (1 stopped at the token limit)" in describe_verdicts(tally)


# The model's answers and the judge's verdicts: the answer to [q9] is wrong ("d", gold b), and
# the judge's "yes" about it is cut at its token limit; the answer to [q2] is cut, the rest whole.
def _mmworld_reply(body: dict[str, Any]) -> str | Reply:
    text = request_text(body)
    if JUDGE_MARK in text:
        return Reply(text="yes", truncated=True) if "[q9]" in text else "yes"
    if "[q9]" in text:
        return "d"
    gold = {q["question"]: q["correct_answer_label"] for r in records() for q in r["questions"]}
    label = next(label for question, label in gold.items() if question in text)
    return Reply(text=label, truncated=True) if "[q2]" in text else label


def test_a_cut_judge_verdict_is_no_verdict_and_a_cut_answer_is_marked(tmp_path: Path) -> None:
    data = make_mmworld(tmp_path / "data")
    out = tmp_path / "res"
    with ChatServer(reply=_mmworld_reply) as server:
        code = main(
            [
                "--no-progress", "run", "mmworld:judge-all", "--data", str(data),
                "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                "--model", f"openai-compat:{server.base_url}#model",
                "--judge", f"openai-compat:{server.base_url}#judge",
            ]
        )  # fmt: skip
    rows = {
        row["id"]: row for row in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
    }
    results = json.loads((out / "results.json").read_text())
    judged = rows["vid4#1"]  # [q9]: a wrong answer the cut "yes" would have made right
    assert judged["status"] == "judge" and judged["outcome"]["reason"] == "verdict-unparsed"
    assert "stopped at its token limit" in judged["status_detail"]
    assert code == EXIT_INCOMPLETE and results["errors_by_status"] == {"judge": 1}
    cut = rows["vid1#0"]  # [q2]
    assert cut["truncated"] is True and cut["outcome"]["kind"] == "correct"  # scored as it is
    assert sum(1 for row in rows.values() if row.get("truncated")) == 1
    assert results["truncated"] == 1


def test_a_judge_call_the_api_rejects_is_not_advised_as_a_retry(
    tmp_path: Path, capsys: Any
) -> None:
    def reply(body: dict[str, Any]) -> str | Reply:
        text = request_text(body)
        if JUDGE_MARK in text and "[q9]" in text:
            return Reply(http_status=400, error="the image is not valid")
        return _mmworld_reply(body) if JUDGE_MARK in text or "[q2]" not in text else "a"

    data = make_mmworld(tmp_path / "data")
    out = tmp_path / "res"
    with ChatServer(reply=reply) as server:
        argv = [
            "--no-progress", "run", "mmworld:judge-all", "--data", str(data), "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"),
            "--model", f"openai-compat:{server.base_url}#model",
            "--judge", f"openai-compat:{server.base_url}#judge",
        ]  # fmt: skip
        capsys.readouterr()
        assert main(argv) == EXIT_INCOMPLETE
    said = " ".join(capsys.readouterr().err.split())
    results = json.loads((out / "results.json").read_text())
    assert results["errors_by_status"] == {"judge": 1}
    assert "change first the request (the server refused it) (1)" in said
    assert "run the same command again to retry" not in said
    assert "run the judge stage again" not in said
