"""Adversarial rule annotation through `vidbench rules`: attacks, a round that breaks the rule
(shown with the judge's reasoning), a revision, a round where it holds, export and history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoeval_support import AUTOEVAL, judge_args, official_prompt, prompt_of, read_jsonl, rows
from autoeval_support import vidbench as run
from vidbench.benchmarks.autoeval_video.redteam import Workspace, status
from vidbench.testing import ChatServer


def flat(text: str) -> str:
    return " ".join(text.split())


HONEST = "The person is fastening the child's seat belt."
SNEAKY = "The person is buckling something, maybe a bag strap, while a baby watches."
PATCH = "\n6. Buckling a bag strap is not fastening the seat belt: such an answer is wrong."


def judge(body: dict) -> str:
    """Fooled by the sneaky answer until the rule says bag straps are wrong."""
    prompt = prompt_of(body)
    if SNEAKY in prompt and "bag strap is not" not in prompt:
        return "The answer mentions buckling, which is close to fastening.\n1"
    if SNEAKY in prompt:
        return "Rule 6: a bag strap is not the seat belt.\n0"
    return "The answer says the seat belt is fastened.\n1"


def test_attack_refine_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    rule0 = rows()[0]["Rule"]
    assert run("rules", "init", ws, "--rules", AUTOEVAL) == 0
    assert run("rules", "attack", ws, "1", "--answer", HONEST, "--expect", "1") == 0
    sneaky = tmp_path / "sneaky.txt"
    sneaky.write_text(SNEAKY)
    assert run("rules", "attack", ws, "1", "--answer-file", sneaky, "--expect", "0") == 0
    capsys.readouterr()

    with ChatServer(reply=judge) as server:
        assert run("rules", "check", ws, "1", *judge_args(server)) == 1  # the rule is broken
        shown = " ".join(capsys.readouterr().out.split())
        assert "round 1, rule v0: 1 of 2 attack(s) break the rule" in shown
        assert "attack 2 expected 0, judge said 1" in shown and SNEAKY in shown
        assert "judge's reasoning: The answer mentions buckling" in shown
        assert {prompt_of(b) for b in server.requests} == {
            official_prompt(rule0, HONEST),
            official_prompt(rule0, SNEAKY),
        }

        new_rule = tmp_path / "rule1.txt"
        new_rule.write_text(
            rule0.replace("\n[Answer to be judged]:", PATCH + "\n[Answer to be judged]:")
        )
        assert run("rules", "revise", ws, "1", "--rule-file", new_rule, "--note", "bag") == 0
        bad = tmp_path / "bad.txt"
        bad.write_text("a rule that lost its marker")
        assert run("rules", "revise", ws, "1", "--rule-file", bad) == 2
        assert "needs exactly one '[Answer to be judged]:' marker" in flat(capsys.readouterr().err)

        assert run("rules", "check", ws, "1", *judge_args(server)) == 0
        assert "the rule holds: no attack breaks rule v1" in flat(capsys.readouterr().out)
        sent = len(server.requests)
        assert sent == 4
        assert run("rules", "check", ws, "1", *judge_args(server)) == 0
        assert len(server.requests) == sent  # the same judgments come from the store

    workspace = Workspace.open(ws)
    history = workspace.instance("1")
    assert status(history) == "holds"
    assert [(v["version"], v["round"]) for v in history["versions"]] == [(0, 0), (1, 1)]
    assert [r["successful_attacks"] for r in history["rounds"]] == [[2], [], []]
    assert [r["version"] for r in history["rounds"]] == [0, 1, 1]
    first = history["rounds"][0]["results"]
    assert [(r["attack"], r["expected"], r["verdict"], r["broke"]) for r in first] == [
        (1, 1, 1, False),
        (2, 0, 1, True),
    ]
    assert json.loads((ws / "redteam.json").read_text())["instances"]["1"] == history

    assert run("rules", "attack", ws, "1", "--answer", "Nothing happens.", "--expect", "0") == 0
    assert status(Workspace.open(ws).instance("1")) == "open"  # a new attack reopens the loop

    assert run("rules", "show", ws) == 0
    assert run("rules", "show", ws, "1") == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "rule v1 (after round 1) — bag" in shown
    assert "round 1 on v0" in shown and "successful attacks: 2" in shown

    exported = tmp_path / "rules.json"
    assert run("rules", "export", ws, "--out", exported) == 0
    updated = read_jsonl(exported)
    assert len(updated) == 327 and updated[0]["Rule"] == new_rule.read_text()
    assert updated[1:] == rows()[1:] and updated[0]["Question"] == rows()[0]["Question"]
    initial = tmp_path / "initial.json"
    assert run("rules", "export", ws, "--out", initial, "--initial") == 0
    assert read_jsonl(initial) == rows()


def test_workspace_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    assert run("rules", "attack", ws, "1", "--answer", "x", "--expect", "1") == 2
    assert "no redteam.json; start with `vidbench rules init" in flat(capsys.readouterr().err)
    assert run("rules", "init", ws, "--rules", AUTOEVAL / "AUTO-EVAL-VIDEO.json") == 0
    assert run("rules", "init", ws, "--rules", AUTOEVAL) == 2
    assert run("rules", "attack", ws, "999", "--answer", "x", "--expect", "1") == 2
    assert "ID 999: no usable rule" in flat(capsys.readouterr().err)
    assert run("rules", "check", ws, "2", "--judge", "constant:x") == 2
    assert "ID 2: no attacks yet" in flat(capsys.readouterr().err)
