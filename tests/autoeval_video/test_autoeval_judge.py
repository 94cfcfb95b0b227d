"""`vidbench judge autoeval-video` against a real HTTP judge: the official prompts byte for byte
for all 327 rules, strict and robust parsing, the drop / wrong policies, bounded re-asks, nothing
asked twice, and bad input named and counted."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from pathlib import Path

import pytest

from autoeval_support import (
    PREDICTIONS,
    judging,
    official_prompt,
    prompt_of,
    read_jsonl,
    rows,
    vidbench,
    write_jsonl,
)
from vidbench.benchmarks.autoeval_video.loader import DIMENSIONS, RELEASED_COUNTS
from vidbench.benchmarks.autoeval_video.rules import COLUMNS, OFFICIAL_ATTEMPTS
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK
from vidbench.testing import ChatServer, Reply

# Reply kinds, by ID: parsed by both parsers, by the robust parser only, by neither.
STRICT = {"correct": "The answer names the seat belt.\n1", "wrong": "It names a chair.\n0"}
ROBUST_ONLY = ["Reason.\n**1**", "Reason.\nScore: 1", "Reason.\n1.", "Reason.\n0\n", "Reason.\n 1"]
NEVER = "I cannot tell whether the answer is correct."


def kind(sample_id: int) -> str:
    if sample_id % 25 == 7:
        return "never"
    if sample_id % 25 in (3, 11, 19):
        return "robust-only"
    return "correct" if zlib.crc32(str(sample_id).encode()) % 3 else "wrong"


def scripted(prompts: dict[str, int]):
    """A judge whose reply depends on which instance the prompt is about."""

    def reply(body: dict) -> str:
        sample_id = prompts[prompt_of(body)]
        k = kind(sample_id)
        if k == "never":
            return NEVER
        if k == "robust-only":
            return ROBUST_ONLY[sample_id % len(ROBUST_ONLY)]
        return STRICT[k]

    return reply


@pytest.fixture(scope="module")
def expected_prompts() -> dict[str, int]:
    predictions = {p["ID"]: p["prediction"] for p in rows(PREDICTIONS)}
    return {official_prompt(r["Rule"], predictions[r["ID"]]): r["ID"] for r in rows()}


def test_released_dimension_counts() -> None:
    counts = Counter(r["Dimension"] for r in rows())
    assert dict(counts) == RELEASED_COUNTS
    assert sorted(counts.values(), reverse=True) == [80, 66, 46, 32, 32, 30, 19, 19, 3]
    assert set(DIMENSIONS) == set(counts) and ("Overall", *DIMENSIONS) == COLUMNS


@pytest.mark.slow
def test_official_protocol_prompts_parsing_and_drop(
    tmp_path: Path, expected_prompts: dict[str, int]
) -> None:
    out = tmp_path / "official"
    with ChatServer(reply=scripted(expected_prompts)) as server:
        assert vidbench(*judging(server), "--out", out, "--protocol", "official") == 0
        bodies = server.requests
        sends = Counter(prompt_of(b) for b in bodies)

        # Every one of the 327 prompts is the official assembly, byte for byte, alone in one
        # user message; nothing else was sent.
        assert set(sends) == set(expected_prompts) and len(expected_prompts) == 327
        assert all(b["temperature"] == 1.0 and b["top_p"] == 1.0 for b in bodies)
        ids = [r["ID"] for r in rows()]
        never = [i for i in ids if kind(i) == "never"]
        robust_only = [i for i in ids if kind(i) == "robust-only"]
        unreadable = set(never + robust_only)
        # an unreadable reply is asked again until the official bound (11 asks), the rest once
        for prompt, n in sends.items():
            assert n == (OFFICIAL_ATTEMPTS if expected_prompts[prompt] in unreadable else 1)

        results = json.loads((out / "results.json").read_text())
        assert results["protocol"] == "official"
        assert results["judge_protocol"]["attempts"] == 11
        assert results["judge_protocol"]["unparsed"] == "drop"
        assert results["n_dropped"] == results["n_unparsed"] == len(unreadable)
        assert results["n_judged"] == 327 - len(unreadable) == results["column_n"]["Overall"]
        assert list(results["columns"]) == list(COLUMNS)
        by_row = {r["ID"]: r for r in rows()}
        judged = [i for i in ids if i not in unreadable]
        for dimension in DIMENSIONS:
            mine = [i for i in judged if by_row[i]["Dimension"] == dimension]
            correct = sum(1 for i in mine if kind(i) == "correct")
            assert results["column_n"][dimension] == len(mine)
            assert results["columns"][dimension] == pytest.approx(100 * correct / len(mine))
        correct = sum(1 for i in judged if kind(i) == "correct")
        assert results["columns"]["Overall"] == pytest.approx(100 * correct / len(judged))

        records = {r["id"]: r for r in read_jsonl(out / "samples.jsonl")}
        assert len(records) == 327
        first = records[str(judged[0])]
        verdict = first["details"]
        assert verdict["reason"] and first["judge_reply"].endswith(str(verdict["verdict"]))
        dropped = records[str(never[0])]["details"]
        assert dropped["dropped"] and dropped["attempts"] == 11

        # Robust parsing with `wrong` over the same store: same prompts, same settings, so every
        # reply is read from the store and not one request is sent.
        again = tmp_path / "official-robust"
        (again).mkdir()
        (again / "store.sqlite").write_bytes((out / "store.sqlite").read_bytes())
        before = len(server.requests)
        robustly = ["--protocol", "official", "--parser", "robust", "--unparsed", "wrong"]
        assert vidbench(*judging(server), "--out", again, *robustly) == 0
        assert len(server.requests) == before
    robust = json.loads((again / "results.json").read_text())
    assert robust["protocol"] == "official+parser=robust+unparsed=wrong"
    assert robust["n_unparsed"] == len(never) and robust["n_dropped"] == 0
    assert robust["n_judged"] == robust["column_n"]["Overall"] == 327
    correct = sum(1 for i in ids if kind(i) == "correct")
    correct += sum(1 for i in robust_only if "1" in ROBUST_ONLY[i % len(ROBUST_ONLY)])
    assert robust["columns"]["Overall"] == pytest.approx(100 * correct / 327)


def test_rerun_asks_nothing_and_retries_stop_when_a_reply_parses(tmp_path: Path) -> None:
    asks: Counter[str] = Counter()

    def reply(body: dict) -> str:
        prompt = prompt_of(body)
        asks[prompt] += 1
        return "Reason.\n1" if asks[prompt] >= 3 else "no verdict here"

    rules = write_jsonl(tmp_path / "rules.jsonl", rows()[:40])
    out = tmp_path / "out"
    with ChatServer(reply=reply) as server:
        args = [*judging(server, rules), "--out", out, "--judge-attempts", "5"]
        assert vidbench(*args) == 0
        assert len(server.requests) == 40 * 3 and set(asks.values()) == {3}
        bodies = server.requests
        assert all(b["temperature"] == 0.0 and b["max_tokens"] == 1024 for b in bodies)
        assert vidbench(*args) == 0
        assert len(server.requests) == 40 * 3  # all stored: nothing asked again
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"] == "robust+attempts=5"
    assert results["columns"]["Overall"] == 100.0 and results["n_judged"] == 40
    # the 287 predictions without a rule in this file are named, not judged
    assert results["errors_by_status"] == {"unknown-id": 287}
    written = read_jsonl(out / "samples.jsonl")
    assert {r["details"]["attempts"] for r in written if not r["error"]} == {3}


def test_failed_judge_calls_exit_incomplete_and_a_rerun_asks_only_them(tmp_path: Path) -> None:
    """A judge failing mid-run (a 500, a 429 past the retries): exit 3, the instances named;
    the same command again asks only those, and exits 0."""
    rules = write_jsonl(tmp_path / "rules.jsonl", rows()[:10])
    failing = {prompt_of_rule(r["Rule"]) for r in rows()[3:5]}
    healthy = {"on": False}

    def reply(body: dict) -> str | Reply:
        if not healthy["on"] and any(f in prompt_of(body) for f in failing):
            return Reply(http_status=500 if "2" in prompt_of(body) else 429, error="scripted")
        return "Reason.\n1"

    out = tmp_path / "out"
    with ChatServer(reply=reply) as server:
        args = [*judging(server, rules), "--out", out, "--judge-opt", "max_retries=1"]
        assert vidbench(*args) == EXIT_INCOMPLETE
        results = json.loads((out / "results.json").read_text())
        assert results["unjudged"] == 2 and results["n_judged"] == 8
        assert {e["id"] for e in results["error_details"] if e["status"] == "judge"} == {"4", "5"}
        sent = len(server.requests)
        healthy["on"] = True
        assert vidbench(*args) == EXIT_OK
        assert len(server.requests) - sent == 2  # only the two without a verdict
        assert json.loads((out / "results.json").read_text())["n_judged"] == 10


def test_a_refused_judge_call_says_what_to_change_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = write_jsonl(tmp_path / "rules.jsonl", rows()[:4])
    refused = prompt_of_rule(rows()[2]["Rule"])

    def reply(body: dict) -> str | Reply:
        if refused in prompt_of(body):
            return Reply(http_status=401, error="invalid api key")  # no rerun helps
        return "Reason.\n1"

    out = tmp_path / "out"
    with ChatServer(reply=reply) as server:
        assert vidbench(*judging(server, rules), "--out", out) == EXIT_INCOMPLETE
    results = json.loads((out / "results.json").read_text())
    assert results["unjudged"] == 0 and results["n_judged"] == 3
    said = capsys.readouterr()
    printed = " ".join((said.out + said.err).split())
    assert "would be refused again as they are" in printed and "change first" in printed


def prompt_of_rule(rule: str) -> str:
    """A piece of a rule's text that only its judge prompt holds."""
    return rule[:200]


def test_bad_input_is_named_counted_and_the_rest_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rows()[:12]
    rules[3]["Rule"] = rules[3]["Rule"].replace("[Answer to be judged]:", "[Answer]:")  # ID 4
    rules_file = write_jsonl(tmp_path / "AUTO-EVAL-VIDEO.json", rules)
    predictions = [{"ID": r["ID"], "prediction": f"answer {r['ID']}"} for r in rules]
    del predictions[4]  # ID 5 has no prediction
    predictions[2]["prediction"] = "   "  # ID 3: empty answer
    predictions.append({"ID": 999, "prediction": "a prediction for no rule"})
    pred_file = write_jsonl(tmp_path / "pred.jsonl", predictions)
    with pred_file.open("a") as f:
        f.write('{"ID": 7, "prediction": \n')  # malformed line
    with ChatServer(reply="Fine.\n1") as server:
        out = tmp_path / "out"
        # rule 4 and ID 5 are left out: incomplete
        code = vidbench(*judging(server, rules_file, pred_file), "--out", out)
        assert code == EXIT_INCOMPLETE
        prompts = [prompt_of(b) for b in server.requests]
    assert len(prompts) == 9  # 12 rules - bad rule 4 - missing 5 - empty 3 (robust: no call)
    printed = " ".join(capsys.readouterr().out.split())
    assert "ID 999: prediction for an unknown ID" in printed
    assert "ID 5: no prediction" in printed
    assert "'[Answer to be judged]:' marker" in printed and "4: line 4" in printed
    assert "malformed JSON" in printed and "line 13" in printed
    assert "empty answers, counted wrong unasked: IDs 3" in printed
    results = json.loads((out / "results.json").read_text())
    assert results["errors_by_status"] == {"data": 2, "unknown-id": 1, "no-prediction": 1}
    assert results["n_empty_answers"] == 1 and results["n_judged"] == 10
    assert results["columns"]["Overall"] == 90.0  # 9 judged correct, the empty answer wrong

    official = tmp_path / "official"
    with ChatServer(reply="Fine.\n1") as server:
        judged = judging(server, rules_file, pred_file)
        assert vidbench(*judged, "--out", official, "--protocol", "official") == EXIT_INCOMPLETE
        sent = [prompt_of(b) for b in server.requests]
    assert official_prompt(rules[2]["Rule"], "   ") in sent  # official: the empty answer is sent
    assert json.loads((official / "results.json").read_text())["n_judged"] == 10


def test_a_folder_of_another_run_is_started_over_with_fresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the refusal names --fresh: the judge command takes it too
    from custom_support import make_bench

    out = tmp_path / "out"
    assert vidbench("run", f"custom:{make_bench(tmp_path / 'bench')}", "--model", "random",
                    "--out", out) == 0  # fmt: skip
    rules_file = write_jsonl(tmp_path / "AUTO-EVAL-VIDEO.json", rows()[:3])
    pred_file = write_jsonl(
        tmp_path / "pred.jsonl", [{"ID": r["ID"], "prediction": "x"} for r in rows()[:3]]
    )
    capsys.readouterr()
    with ChatServer(reply="Fine.\n1") as server:
        judged = judging(server, rules_file, pred_file)
        assert vidbench(*judged, "--out", out) == 2
        assert "or --fresh to start over in" in " ".join(capsys.readouterr().err.split())
        assert vidbench(*judged, "--out", out, "--fresh") == 0
    assert json.loads((out / "results.json").read_text())["n_judged"] == 3
