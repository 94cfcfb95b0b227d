"""`vidbench judge-agreement`: the judge against human verdicts, overall, per subset and per
dimension, confusion matrix and bootstrap interval; the rules and the unified prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autoeval_support import RULES, judge_args, prompt_of, read_jsonl, rows, vidbench, write_jsonl
from vidbench.benchmarks.autoeval_video.unified import assemble_unified
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK
from vidbench.scoring.agreement import binary_agreement, cohen_kappa
from vidbench.scoring.stats import bootstrap_ci
from vidbench.testing import ChatServer, Reply

ANSWER = re.compile(r"\[Answer to be judged\]: (.*)\n")


def judge_reply(body: dict) -> str:
    """Says 1 for "good N" and 0 for "bad N", except: good 3 and good 4 -> 0, bad 5 -> 1,
    bad 6 -> no verdict at all."""
    answer = ANSWER.search(prompt_of(body)).group(1)
    word, _ = answer.split()
    if answer == "bad 6":
        return "I am not sure."
    verdict = {"good 3": 0, "good 4": 0, "bad 5": 1}.get(answer, int(word == "good"))
    return f"Compared with the rule.\n{verdict}"


@pytest.fixture()
def labels(tmp_path: Path) -> Path:
    items = []
    for i in range(1, 16):
        subset = "models/human" if i % 2 else "gpt-4v"
        items.append({"ID": i, "answer": f"good {i}", "human": 1, "subset": subset})
        items.append({"ID": i, "answer": f"bad {i}", "human": False, "subset": subset})
    items.append({"ID": 999, "answer": "good 999", "human": 1})
    items.append({"ID": 2, "answer": "good 2", "human": "maybe"})
    return write_jsonl(tmp_path / "labels.jsonl", items)


def _run(tmp_path: Path, labels: Path, name: str, *extra: str) -> dict:
    out = tmp_path / name
    with ChatServer(reply=judge_reply) as server:
        args = ("judge-agreement", "--rules", RULES, "--labels", labels, "--out", out)
        assert vidbench(*args, *judge_args(server), *extra) == 0
    return json.loads((out / "agreement.json").read_text())


def test_agreement_overall_subsets_confusion_and_interval(tmp_path: Path, labels: Path) -> None:
    report = _run(tmp_path, labels, "robust")
    overall = report["overall"]
    assert report["n_labels"] == 32 and report["n_counted"] == 30 and report["n_unparsed"] == 1
    assert overall["n"] == 30 and overall["agreement"] == 90.0  # bad 6 unparsed counts as 0
    assert overall["confusion"] == {
        "human=1": {"judge=1": 13, "judge=0": 2},
        "human=0": {"judge=1": 1, "judge=0": 14},
    }
    items = read_jsonl(tmp_path / "robust" / "agreement_items.jsonl")
    agree = [float(i["agree"]) for i in items if i["counted"]]
    assert sorted(agree) == [0.0] * 3 + [1.0] * 27
    low, high = bootstrap_ci(agree)
    assert overall["ci95"] == [round(low, 2), round(high, 2)] and low < 90 < high
    odd, even = report["by_subset"]["models/human"], report["by_subset"]["gpt-4v"]
    assert (odd["n"], odd["agreement"]) == (16, 87.5)  # good 3, bad 5 wrong
    assert (even["n"], even["agreement"]) == (14, round(100 * 13 / 14, 2))  # good 4 wrong
    dimensions = {r["ID"]: r["Dimension"] for r in rows()[:15]}
    assert set(report["by_dimension"]) == set(dimensions.values())
    assert sum(d["n"] for d in report["by_dimension"].values()) == 30
    errors = " ".join(e["error"] for e in report["errors"])
    assert "ID 999: no usable rule" in errors and "'human' must be 0 or 1" in errors
    good3 = next(i for i in items if i["answer"] == "good 3")
    assert good3["judge"] == 0 and good3["agree"] is False
    assert good3["reason"] == "Compared with the rule."

    official = _run(tmp_path, labels, "official", "--protocol", "official")
    assert official["n_counted"] == 29 and official["n_dropped"] == 1  # bad 6 dropped
    assert official["overall"]["agreement"] == round(100 * 26 / 29, 2)


def test_a_failed_judge_call_exits_incomplete_until_a_rerun_asks_it(
    tmp_path: Path, labels: Path
) -> None:
    healthy = {"on": False}

    def reply(body: dict) -> str | Reply:
        if not healthy["on"] and ANSWER.search(prompt_of(body)).group(1) == "good 7":
            return Reply(http_status=500, error="scripted")
        return judge_reply(body)

    out = tmp_path / "agreement"
    with ChatServer(reply=reply) as server:
        args = ("judge-agreement", "--rules", RULES, "--labels", labels, "--out", out)
        more = (*judge_args(server), "--judge-opt", "max_retries=0")
        assert vidbench(*args, *more) == EXIT_INCOMPLETE
        report = json.loads((out / "agreement.json").read_text())
        assert report["n_unjudged"] == 1 and report["overall"]["n"] == 29
        assert any("judge failed" in e["error"] for e in report["errors"])
        sent = len(server.requests)
        healthy["on"] = True
        assert vidbench(*args, *more) == EXIT_OK
        assert len(server.requests) - sent == 1
        report = json.loads((out / "agreement.json").read_text())
        assert report["n_unjudged"] == 0 and report["overall"]["n"] == 30


def test_a_refused_judge_call_says_what_to_change_not_that_a_rerun_asks_it(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(body: dict) -> str | Reply:
        if ANSWER.search(prompt_of(body)).group(1) == "good 7":
            return Reply(http_status=413, error="request too large")  # refused again as it is
        return judge_reply(body)

    out = tmp_path / "agreement"
    with ChatServer(reply=reply) as server:
        args = ("judge-agreement", "--rules", RULES, "--labels", labels, "--out", out)
        assert vidbench(*args, *judge_args(server)) == EXIT_INCOMPLETE
    report = json.loads((out / "agreement.json").read_text())
    assert (report["n_refused"], report["n_unjudged"], report["overall"]["n"]) == (1, 0, 29)
    said = capsys.readouterr()
    printed = " ".join((said.out + said.err).split())
    assert "change first" in printed and "no verdict; run the judge stage again" not in printed
    assert any("refused" in e["error"] for e in report["errors"])


def test_unified_prompt_agreement(tmp_path: Path, labels: Path) -> None:
    references = [{"ID": i, "reference": f"reference {i}"} for i in range(1, 15)]  # not 15
    refs = write_jsonl(tmp_path / "refs.jsonl", references)
    seen: list[str] = []

    def reply(body: dict) -> str:
        seen.append(prompt_of(body))
        answer = seen[-1].split("[Answer to be judged]: ")[1].split("\n")[0]
        return judge_reply(
            {"messages": [{"role": "user", "content": f"[Answer to be judged]: {answer}\n"}]}
        )

    out = tmp_path / "unified"
    with ChatServer(reply=reply) as server:
        code = vidbench(
            "judge-agreement", "--rules", RULES, "--labels", labels, "--out", out,
            "--judge-prompt", "unified", "--references", refs, *judge_args(server),
        )  # fmt: skip
        assert code == 0
    questions = {str(r["ID"]): r["Question"] for r in rows()}
    assert assemble_unified(questions["7"], "reference 7", "bad 7") in seen
    assert len(seen) == 28 + 2  # 28 labelled answers with a reference, bad 6 asked 3 times
    report = json.loads((out / "agreement.json").read_text())
    assert report["judge_prompt"] == "unified" and report["n_counted"] == 28
    assert any("ID 15: no reference answer" in e["error"] for e in report["errors"])


def test_agreement_statistics() -> None:
    pairs = [(1, 1)] * 40 + [(0, 0)] * 40 + [(1, 0)] * 10 + [(0, 1)] * 10
    stats = binary_agreement(pairs)
    assert stats["agreement"] == 80.0 and stats["kappa"] == 0.6
    assert stats["confusion"]["human=1"] == {"judge=1": 40, "judge=0": 10}
    assert cohen_kappa([]) is None and binary_agreement([])["agreement"] is None
