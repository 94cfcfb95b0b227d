"""extract_choice(protocol="official") against the paper's own function (papers/001, D.2)."""

from __future__ import annotations

import re

import pytest

from vidbench.core.errors import ConfigError
from vidbench.scoring.choices import extract_choice


def paper_extract_answer_option(text):  # verbatim from papers/001 section D.2 (line break joined)
    paren_pattern = r"\(([A-D])\)"
    matches = re.findall(paren_pattern, text)
    if matches:
        return matches[0]
    isolated_pattern = r"(?:^|[\s\(\.,;:])([A-D])(?:[\s\)\.,;:]|$)"
    matches = re.findall(isolated_pattern, text)
    if matches:
        return matches[0]
    return None


CORPUS = [
    "(A)",
    "(B)",
    " (C) ",
    "(D)</s>",
    "(A) red</s>",
    "B",
    "C.",
    "D)",
    "answer is B.",
    "The answer is B",
    "The answer is (C).",
    "Answer: D",
    "answer:A",
    "a",
    "(a)",
    "b.",
    "The correct option is c",
    "A or B",
    "(B) or (C)",
    "A, B and C",
    "B (A)",
    "I think it's A because the cube moves. However, (D) is also possible.",
    "Based on the video, the red sphere moves left, so the answer is option B: moves left.",
    "After looking at all views, A cube and A sphere are visible. The answer is C.",
    "Option A describes the colour, option B the shape; I pick D",
    "None of the options fit.",
    "",
    "E",
    "(E)",
    "AB",
    "BA.",
    "ABCD",
    "The answer is: B</s>",
    "B</s>",
    "</s>B",
    "\nC\n",
    "\tD\t",
    "[A]",
    "{B}",
    "'C'",
    '"D"',
    "Answer (b)",
    "CAT",
    "A.B.",
    ";A;",
    ":B:",
    "x(A)y",
    "(A)(B)",
    "((C))",
    "The correct answer is (D) the blue cube jumps first.",
    "Apple is A red fruit",
    "I cannot determine the answer from the frames provided.",
    "**B**",
    "Answer - C",
    "Choice D.",
    "The answer is \u201cA\u201d.",
]


@pytest.mark.parametrize("text", CORPUS)
def test_official_matches_paper_function(text: str) -> None:
    assert extract_choice(text, protocol="official") == paper_extract_answer_option(text)


def test_corpus_covers_parsed_and_unparsed() -> None:
    results = [paper_extract_answer_option(t) for t in CORPUS]
    assert {"A", "B", "C", "D"} <= set(results)
    assert results.count(None) >= 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(A)", "A"),
        ("answer is B.", "B"),
        ("b", None),  # case-sensitive
        ("(B) or (C)", "B"),  # first parenthesised letter
        ("B (A)", "A"),  # parentheses win over an earlier bare letter
        ("(D)</s>", "D"),
        ("B</s>", None),  # '<' does not border a letter in the official pattern
        ("**B**", None),
        ("", None),
    ],
)
def test_known_values(text: str, expected: str | None) -> None:
    assert extract_choice(text) == expected


def test_none_and_unknown_protocol() -> None:
    assert extract_choice(None) is None
    with pytest.raises(ConfigError, match="unknown choice-extraction protocol"):
        extract_choice("(A)", protocol="nope")
