"""MMWorld scoring pieces: the official post-processing, the named parser, the judge prompt and
verdicts, columns, mean ± std over runs, the task variants."""

from __future__ import annotations

import pytest

from vidbench.benchmarks.mmworld.judge import (
    judge_call,
    judge_prompt,
    official_verdict,
    yes_no_verdict,
)
from vidbench.benchmarks.mmworld.parse import official_post_processing, parse_answer
from vidbench.benchmarks.mmworld.variants import reduced_frames
from vidbench.core.errors import ConfigError
from vidbench.registry import get_task
from vidbench.report.runs import aggregate
from vidbench.report.schema import Results
from vidbench.report.tables import to_markdown

OPTIONS = {"a": "The robot falls over", "b": "It keeps walking", "c": "The engineer stops it"}


@pytest.mark.parametrize(
    ("reply", "processed"),
    [
        ("b", "b"),
        ("B. It keeps walking", "b"),
        ("The answer is c. Because the engineer...", "c"),
        ("'a'", "a"),
        ("a: The robot falls over", "a"),
        ("(b)", "(b)"),
        ("Option B", "option b"),
        ("b) It keeps walking", "b) it keeps walking"),
    ],
)
def test_official_post_processing(reply: str, processed: str) -> None:
    assert official_post_processing(reply) == processed


@pytest.mark.parametrize(
    ("reply", "official", "better"),
    [
        ("b", "b", "b"),
        ("The answer is c.", "c", "c"),
        ("(b)", None, "b"),
        ("Answer: c", None, "c"),
        ("Option B is the best fit", None, "b"),
        ("b) It keeps walking", None, "b"),
        ("[C]", None, "c"),
        ("I believe it keeps walking.", None, "b"),  # the option's text
        ("The answer is a robot that walks", None, None),  # "a" as an article is no label
        ("The answer is (a)", None, "a"),
        ("d", None, None),  # not among this question's labels
        ("It keeps walking or the engineer stops it", None, None),  # two options' texts
        # several labels named alike, or the one named is ruled out: no choice
        ("Option A or option B", None, None),
        ("(a) or (b)", None, None),
        ("Definitely not option C.", None, None),
        ("The answer is (b), not (a)", None, "b"),
        ("Not option a but option c", None, "c"),
        # "a" after "option", and "A" mid-sentence, are labels, not the article
        ("Option A is the best fit", None, "a"),
        ("The answer is A because the robot tips over", None, "a"),
        ("Answer: A robot falls", None, None),
        ("A. B. C.", "a", None),  # every option, a sentence each
        ("The answer is b. Option a is wrong.", "b", "b"),
        ("b{END}", "b", "b"),  # the official GPT stop mark
        ("", None, None),
    ],
)
def test_parsers(reply: str, official: str | None, better: str | None) -> None:
    assert parse_answer(reply, OPTIONS, "official") == official
    assert parse_answer(reply, OPTIONS, "letter-or-text") == better


def test_judge_prompt_is_the_official_text() -> None:
    prompt = judge_prompt("Why?", {"a": "x", "b": "y"}, "a", "b")
    assert prompt == (
        "For question: Why?\nOption A: x\nOption B: y(please select one)\n"
        "Ground truth answer: a\nModel predicted answer: b\n"
        "Based on the question and the ground truth answer, is the model's predicted answer "
        "correct? If multi-choice provided, think about which choice is selected by the model, "
        "is it correct? (please answer yes/no)\n"
    )
    call = judge_call("q:judge", "Why?", {"a": "x", "b": "y"}, "a", "b", "official")
    assert [m.role for m in call.messages] == ["system", "user"]
    assert call.messages[0].text == "You are a helpful assistant that provides concise answers."


@pytest.mark.parametrize(
    ("reply", "official", "yes_no"),
    [
        ("yes", True, True),
        ("no", False, False),
        ("Yes.", True, True),
        ("**No**, the model chose b.", False, False),
        ("The model picked option a, which matches. So yes.", True, True),
        ("Looking at the options, the model's choice differs from the ground truth.", False, None),
        ("Yes and no.", True, None),  # two verdicts
        ("No. Yes.", True, None),
        # a yes/no inside the reasoning may be the judge quoting the answer under test
        ("The model answered 'yes', which does not match the ground truth.", True, None),
        ("Based on the ground truth, the model's answer is not correct, no.", False, False),
        ("The eyes deceive", True, None),  # the official substring rule
    ],
)
def test_verdicts(reply: str, official: bool, yes_no: bool | None) -> None:
    assert official_verdict(reply) is official
    assert yes_no_verdict(reply) is yes_no


def test_variants_and_their_settings() -> None:
    base = get_task("mmworld")
    assert (base.frame_spec.frames, base.frame_spec.sampler) == (8, "linspace")
    assert base.options.scoring == "judge-all" and base.protocol == "vidbench"
    keyframes = get_task("mmworld:keyframes+frames-10+api-prompt+official+rule")
    assert (keyframes.frame_spec.frames, keyframes.frame_spec.sampler) == (10, "keyframes")
    assert keyframes.options.prompt == "api" and keyframes.options.answer_parser == "official"
    assert get_task("mmworld:shuffled").frame_spec.shuffle_seed == 0
    assert get_task("mmworld:shuffled-7").frame_spec.shuffle_seed == 7
    # `reduced` applies after --frames
    assert get_task("mmworld:reduced", frames=10).frame_spec.frames == 2
    assert [reduced_frames(n) for n in (1, 2, 8, 10, 16, 32)] == [1, 1, 2, 2, 3, 6]
    # the scoring mode and the parsers are not part of the plan: answers are shared
    assert get_task("mmworld:rule").settings() == get_task("mmworld:judge-fallback").settings()
    assert get_task("mmworld:official").settings() == base.settings()
    assert get_task("mmworld:subtitles").settings() != base.settings()
    assert get_task("mmworld-synth-audio").options.subset == "audio"
    with pytest.raises(ConfigError, match="unknown task variant 'loud'"):
        get_task("mmworld:loud")
    with pytest.raises(ConfigError, match="one scoring mode"):
        get_task("mmworld:rule+judge-all")


def test_runs_aggregate_reproduces_table_3_from_table_6() -> None:
    # papers/003 Table 6: GPT-4o seeds 1-3; Table 3 reports 47.87 ± 1.47, 91.14 ± 0.87, 62.54 ±
    # 0.79 for Art & Sports, Business and Average.
    # Table 6 prints rounded values; the spreads come from the exact ones (k / n correct), which
    # results.json keeps.
    counts = [(365, 132, 970), (361, 130, 963), (387, 129, 992)]
    names = ("Art & Sports", "Business", "Average")
    totals = (775, 143, 1559)

    def run(i: int, c: tuple[int, ...], digits: int | None) -> Results:
        exact = {n: 100 * k / t for n, k, t in zip(names, c, totals, strict=True)}
        columns = {n: v if digits is None else round(v, digits) for n, v in exact.items()}
        document = {"task": "mmworld", "model": "openai:gpt-4o", "columns": columns,
                    "n": 1559, "errors": i, "unparsed": 0, "seed": i}  # fmt: skip
        return Results.model_validate(document)

    results = [run(i, c, None) for i, c in enumerate(counts)]
    combined = aggregate(results, ["r1", "r2", "r3"])

    def two(values: dict[str, float | None] | None) -> dict[str, float | None]:
        return {k: None if v is None else round(v, 2) for k, v in (values or {}).items()}

    assert two(combined.columns) == {"Art & Sports": 47.87, "Business": 91.14, "Average": 62.54}
    assert two(combined.std) == {"Art & Sports": 1.47, "Business": 0.87, "Average": 0.79}
    assert combined.runs == 3 and combined.errors == 3
    assert [round(r.columns["Art & Sports"] or 0, 2) for r in results] == [47.10, 46.58, 49.94]
    rounded = aggregate([run(i, c, 2) for i, c in enumerate(counts)], ["a", "b", "c"])
    assert two(rounded.std)["Art & Sports"] == 1.48  # why results.json keeps them unrounded
    label = "openai:gpt-4o (3 runs) (incomplete: 3 of 4677 not scored)"  # errors 0, 1, 2
    assert f"| {label} | 47.9 ± 1.5 | 91.1 ± 0.9 | 62.5 ± 0.8 |" in to_markdown([combined])
