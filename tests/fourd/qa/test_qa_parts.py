"""The parts of `curate 4d qa`: strict parsing and its reasons, leaks, ids, the gold balance,
the validator's and blind models' replies, and `--show-prompts`."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from vidbench.benchmarks.fourd.curate.qa import candidates as cands
from vidbench.benchmarks.fourd.curate.qa.calls import parse_blind, parse_validation
from vidbench.benchmarks.fourd.curate.qa.layout import letter_balance, qa_records
from vidbench.cli import main


def reply(*questions: dict) -> str:
    return (
        "Let me think: the object is a crab.\n```json\n"
        + json.dumps({"questions": list(questions)})
        + "\n```"
    )


def q(question: str = "How many claws does the crab raise?", answer: str = "B", **options: str):
    return {
        "question": question,
        "options": options or {"A": "One", "B": "Two", "C": "Three", "D": "None"},
        "answer": answer,
    }


def parse(text: str, count: int = 5) -> cands.Generated | None:
    return cands.parse_generation(text, count)


def test_a_reply_without_json_does_not_parse() -> None:
    assert parse("I think the crab waves. (B)") is None
    assert parse('{"question": "bare object, not a list"}') is None


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (q(A="Two", B="two.", C="Three", D="Four"), cands.DUPLICATE_OPTIONS),
        (q(answer="E"), cands.ANSWER_NOT_AN_OPTION),
        (q(answer=""), cands.ANSWER_NOT_AN_OPTION),
        (q(A="One", B="Two", C="Three"), cands.NOT_FOUR_OPTIONS),
        (q(A="One", B="Two", C="Three", E="Four"), cands.NOT_FOUR_OPTIONS),
        (q(A="One", B="", C="Three", D="Four"), cands.NOT_FOUR_OPTIONS),
        (q(question=""), cands.NOT_A_QUESTION),
        ("just text", cands.NOT_A_QUESTION),
        (q("The crab raises two claws: how many claws does it raise?"), cands.LEAK),
        (q("螃蟹举起了几只钳子？", A="一只", B="两只", C="三只", D="没有"), cands.NOT_ENGLISH),
        (q("Сколько клешней поднимает краб?", A="1", B="2", C="3", D="0"), cands.NOT_ENGLISH),
    ],
)
def test_bad_questions_are_rejected_with_their_reason(bad: object, reason: str) -> None:
    generated = parse(reply(q("Which way does the crab walk?"), bad))
    assert generated is not None
    assert [g["question"] for g in generated.questions] == ["Which way does the crab walk?"]
    assert [r["reason"] for r in generated.rejected] == [reason]


def test_a_foreign_word_or_symbol_in_an_english_question_is_kept() -> None:
    generated = parse(reply(q("What does the sign 福 on the crab's shell do as it turns?")))
    assert generated is not None and len(generated.questions) == 1
    generated = parse(reply(q("By what angle θ does it turn?", A="π", B="2π", C="π/2", D="0")))
    assert generated is not None and len(generated.questions) == 1


def test_brackets_in_the_reasoning_do_not_hide_the_questions() -> None:
    # "[1]" and {"step": 1} are JSON too: the block with the questions is the one read
    text = 'Step [1]: the crab walks. {"step": 1} Then:\n' + reply(q())
    generated = parse(text)
    assert generated is not None and len(generated.questions) == 1
    verdict = parse_validation('Check [2] of 3: ok. {"verdict": "accept", "reason": "ok"}')
    assert verdict is not None and verdict["accept"] is True
    # a degenerate run of brackets, too deep for the JSON decoder, is no JSON (it raised, and
    # its stored reply stopped every rerun there)
    assert parse("[" * 5000) is None
    generated = parse("{[" * 3000 + reply(q()))
    assert generated is not None and len(generated.questions) == 1


def test_questions_beyond_the_count_asked_for_are_rejected() -> None:
    five = [q(f"Which claw moves {n}?") for n in range(5)]
    generated = parse(reply(q(answer="E"), *five), count=2)
    assert generated is not None
    assert [g["question"] for g in generated.questions] == [
        "Which claw moves 0?", "Which claw moves 1?"
    ]  # fmt: skip
    reasons = [r["reason"] for r in generated.rejected]
    assert reasons == [cands.ANSWER_NOT_AN_OPTION] + [cands.BEYOND_COUNT] * 3


def test_listing_every_option_is_no_leak() -> None:
    options = {"A": "red", "B": "blue", "C": "green", "D": "white"}
    assert not cands.leaks("Is the hat red, blue, green or white?", options, "A")
    assert cands.leaks("Why is the red hat on the crab?", options, "A")
    assert not cands.leaks("Why is the hat on the crab?", options, "A")


def test_repeats_and_ids() -> None:
    generated = parse(reply(q(), q(), q("Which claw moves first?", "A")))
    assert generated is not None
    assert [r["reason"] for r in generated.rejected] == [cands.REPEATED]
    made = cands.make_candidates("abc", "Action", generated, seed=0)
    assert [c.id for c in made] == ["abc_motion", "abc_motion_2"]
    for candidate, original in zip(made, generated.questions, strict=True):
        gold = original["options"][original["answer"]]
        assert candidate.options[candidate.answer] == gold
        assert sorted(candidate.options.values()) == sorted(original["options"].values())
    again = cands.make_candidates("abc", "Action", generated, seed=0)
    assert [c.options for c in again] == [c.options for c in made]


def test_gold_letters_are_balanced_per_subtask_and_overall() -> None:
    kept = []
    for n, subtask in enumerate(["Appearance"] * 10 + ["Action"] * 3):
        generated = parse(reply(q(f"Question {n}?")))
        assert generated is not None
        kept += cands.make_candidates(f"{n:032x}", subtask, generated, seed=3)
    records = qa_records(kept, seed=3)
    balance = letter_balance(records)
    assert sorted(balance["Appearance"].values()) == [2, 2, 3, 3]
    assert sorted(balance["Action"].values()) == [0, 1, 1, 1]
    assert sorted(balance["Overall"].values()) == [3, 3, 3, 4]
    for record in records.values():  # the gold text is where the index says
        assert (
            record["Options"][record["Answer index"] - 1]
            == f"({'ABCD'[record['Answer index'] - 1]}) Two"
        )
    assert list(records)[:3] == [f"{n:032x}_motion" for n in (10, 11, 12)]  # Table 1 order


def test_validator_and_blind_replies() -> None:
    ok = parse_validation('fine\n```json\n{"verdict": "Accept", "reason": "ok"}\n```')
    assert ok == {"accept": True, "reason": "ok", "explanation": ""}
    odd = parse_validation('{"verdict": "reject", "reason": "boring"}')
    assert odd is not None and odd["reason"] == "other"
    assert parse_validation('{"verdict": "maybe"}') is None
    assert parse_validation("no json") is None
    assert parse_blind("I think (C).") == "C"
    assert parse_blind("the crab") == ""
    # a blind model writing Chinese: full-width brackets and letters are its answer
    assert (parse_blind("答案：（B）"), parse_blind("正确答案是 Ｃ")) == ("B", "C")


def test_show_prompts_prints_every_versioned_prompt(capsys: pytest.CaptureFixture) -> None:
    assert main(["curate", "4d", "qa", "--show-prompts"]) == 0
    text = capsys.readouterr().out
    headers = [line for line in text.splitlines() if line.startswith("=====")]
    assert len(headers) == 9
    for name in ("generate", "validate", "blind", "caption", "subtask_motion"):
        assert f"===== fourd-qa/{name}.v1 =====" in text
    assert "Think step by step" in text and '"answer": "A"' in text
    counts = Counter(h.split("/")[1].split(".")[0].split("_")[0] for h in headers)
    assert counts["subtask"] == 5


def test_subtasks_by_suffix_or_name() -> None:
    from vidbench.benchmarks.fourd.curate.qa.commands import _subtasks
    from vidbench.core.errors import ConfigError

    assert _subtasks("motion, appearance") == ("Action", "Appearance")
    assert _subtasks("Object Counting") == ("Object Counting",)
    assert len(_subtasks(None)) == 5
    with pytest.raises(ConfigError, match="unknown 'colour'"):
        _subtasks("colour")


def test_missing_arguments_are_named() -> None:
    assert main(["curate", "4d", "qa", "--data", "x", "--blind", "random"]) == 2
