"""Generated questions: the generator's reply read strictly, and each question checked.

A reply must hold one JSON block (scoring/model_call.find_json: a fenced block after the
chain-of-thought text, whose own brackets are passed over) of the form `{"questions":
[{"question", "options": {"A".."D"}, "answer": "A".."D"}]}`. A reply with no such block does
not parse, and the generation call asks again (runner/model_calls.py's bounded re-asks); after
the last attempt it counts as a parse failure. Within a parsed reply every question is checked
on its own and a bad one is recorded with its reason (the reasons below are what the funnel
counts); the others go on.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from typing import NotRequired, TypedDict

from pydantic import JsonValue

from vidbench.runner.keys import digest
from vidbench.scoring.language import foreign_script
from vidbench.scoring.model_call import JsonBlock, find_json

LETTERS = ("A", "B", "C", "D")
# Table 1's subtasks and the id suffixes the official release uses for them.
SUBTASKS: dict[str, str] = {
    "Object Counting": "object_counting",
    "Temporal Relationship": "temporal_relationship",
    "Action": "motion",
    "Spatial Relationship": "spatial_relationship",
    "Appearance": "appearance",
}

# reasons a question of a parsed reply is rejected (counted per reason in the funnel)
NOT_A_QUESTION = "malformed question"
NOT_FOUR_OPTIONS = "not four options A-D"
DUPLICATE_OPTIONS = "duplicate options"
ANSWER_NOT_AN_OPTION = "answer not among the options"
LEAK = "answer leaked in the question"
REPEATED = "repeats an earlier question"
BEYOND_COUNT = "more questions than asked for"
NOT_ENGLISH = "not in English"


class Rejected(ValueError):
    """A question that fails a check; `reason` is one of the reasons above."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class Question(TypedDict):
    """A generated question that passed the checks: options A..D -> text, the gold letter."""

    question: str
    options: dict[str, str]
    answer: str


class RejectedQuestion(TypedDict):
    """A generated question that failed a check: the reason (one of those above), what was wrong
    and the question as the reply held it."""

    reason: str
    detail: str
    raw: JsonValue


class Validation(TypedDict, total=False):
    """The validator's verdict on a candidate (accept, reason, explanation), or the end of its
    reply when no verdict could be read from it (reply); empty before it is asked."""

    accept: bool
    reason: str
    explanation: str
    reply: str


class BlindAnswer(TypedDict):
    """What one blind model (no frames) answered to a candidate."""

    model: str
    letter: str | None
    text: str | None
    correct: bool
    error: NotRequired[str | None]  # its call failed (asked again by the next run)


@dataclass(frozen=True)
class Generated:
    """What one generation reply held: the checked questions and the rejected ones."""

    questions: tuple[Question, ...]
    rejected: tuple[RejectedQuestion, ...]


@dataclass
class Candidate:
    """One generated question and what became of it."""

    id: str  # "<uid>_<suffix>" for the first of an object and subtask, then "_2", "_3", ...
    uid: str
    subtask: str
    question: str
    options: dict[str, str]  # A..D -> text, in the order the filters saw
    answer: str  # the gold letter in that order
    status: str = "candidate"  # kept | rejected | blind-dropped | undecided
    reason: str | None = None
    validation: Validation = field(default_factory=lambda: Validation())
    blind: dict[str, BlindAnswer] = field(default_factory=dict)  # "blind 1", "blind 2"

    def as_dict(self) -> dict[str, JsonValue]:
        return asdict(self)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _options(raw: JsonValue) -> dict[str, str]:
    if not isinstance(raw, dict) or sorted(str(k).strip().upper() for k in raw) != list(LETTERS):
        raise Rejected(NOT_FOUR_OPTIONS, f"got {raw!r}"[:200])
    options = {}
    for key, text in raw.items():
        if not isinstance(text, str | int | float) or not str(text).strip():
            raise Rejected(NOT_FOUR_OPTIONS, f"option {key!r} has no text")
        options[str(key).strip().upper()] = " ".join(str(text).split())
    options = {letter: options[letter] for letter in LETTERS}
    if len({_norm(t) for t in options.values()}) != 4:
        raise Rejected(DUPLICATE_OPTIONS, " | ".join(options.values()))
    return options


def leaks(question: str, options: dict[str, str], answer: str) -> bool:
    """The gold option's words stand in the question and no distractor's do: the question gives
    its answer away (a question that lists every option is not a leak)."""
    words = f" {_norm(question)} "

    def inside(text: str) -> bool:
        norm = _norm(text)
        return bool(norm) and f" {norm} " in words

    others = [t for k, t in options.items() if k != answer]
    return inside(options[answer]) and not any(inside(t) for t in others)


def check_question(raw: JsonValue) -> Question:
    """A question object as {question, options, answer}; Rejected says what is wrong."""
    if not isinstance(raw, dict):
        raise Rejected(NOT_A_QUESTION, "not a JSON object")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise Rejected(NOT_A_QUESTION, "no question text")
    options = _options(raw.get("options"))
    answer = str(raw.get("answer", "")).strip().strip("()").upper()
    if answer not in LETTERS:
        raise Rejected(ANSWER_NOT_AN_OPTION, repr(raw.get("answer")))
    question = " ".join(question.split())
    script = foreign_script(" ".join([question, *options.values()]))
    if script is not None:
        raise Rejected(NOT_ENGLISH, f"{script} letters: {question[:100]!r}")
    if leaks(question, options, answer):
        raise Rejected(LEAK, f"{options[answer]!r} in {question!r}")
    return {"question": question, "options": options, "answer": answer}


def _holds_questions(block: JsonBlock) -> bool:
    return isinstance(block, dict) and isinstance(block.get("questions"), list)


def parse_generation(reply: str, count: int) -> Generated | None:
    """The questions of a generator's reply asked for up to `count`; None when it holds no such
    JSON block. Checked questions past the first `count` are rejected (a generator that writes
    ten where two were asked must not weigh its object and subtask five times over)."""
    value = find_json(reply, _holds_questions)
    questions = value.get("questions") if isinstance(value, dict) else None
    if not isinstance(questions, list):
        return None
    good: list[Question] = []
    bad: list[RejectedQuestion] = []
    seen: set[str] = set()
    for raw in questions:
        try:
            checked = check_question(raw)
            if _norm(checked["question"]) in seen:
                raise Rejected(REPEATED, checked["question"])
            if len(good) == count:
                raise Rejected(BEYOND_COUNT, f"{count} asked for")
        except Rejected as e:
            bad.append({"reason": e.reason, "detail": e.detail, "raw": raw})
            continue
        seen.add(_norm(checked["question"]))
        good.append(checked)
    return Generated(tuple(good), tuple(bad))


def shuffled(question: Question, seed: int) -> Question:
    """The options in an order decided by the seed and the question itself (generators favour
    putting the answer first; the filters must not see that)."""
    rng = random.Random(digest([seed, question["question"], question["options"]]))
    order = list(LETTERS)
    rng.shuffle(order)
    options = {new: question["options"][old] for new, old in zip(LETTERS, order, strict=True)}
    return {**question, "options": options, "answer": LETTERS[order.index(question["answer"])]}


def candidate_id(uid: str, subtask: str, n: int) -> str:
    """`<uid>_<suffix>` as the release names questions; the n-th (from 0) after the first gets
    `_<n+1>` so several candidates of one object and subtask stay distinct."""
    base = f"{uid}_{SUBTASKS[subtask]}"
    return base if n == 0 else f"{base}_{n + 1}"


def make_candidates(
    uid: str, subtask: str, generated: Generated, seed: int, start: int = 0
) -> list[Candidate]:
    made = []
    for n, question in enumerate(generated.questions, start=start):
        q = shuffled(question, seed)
        cid = candidate_id(uid, subtask, n)
        made.append(Candidate(cid, uid, subtask, q["question"], q["options"], q["answer"]))
    return made
