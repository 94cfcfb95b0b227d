"""Generated questions: reading a generator's reply and checking each question it holds.

A reply is read as JSON anywhere in it (scoring/model_call.find_json: code fences and prose
tolerated): `{"questions": [...]}`, a bare list, or one question object. A reply with no such JSON
does not parse, and the generation call asks again (runner/model_calls.py's bounded re-asks).
Within a parsed reply each question is checked on its own; a malformed one (no text, not four
distinct options, an answer that is none of them, text mostly in another script than English's:
scoring/language.py) is dropped with its reason and counted, the
others are kept.

Options are shuffled with a seed derived from the question (MMWorld's random-choice baseline and
rule scoring assume the gold label carries no information; generators favour "a"), so the same
reply always gives the same candidate.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass
from typing import TypedDict

from pydantic import JsonValue

from vidbench.runner.keys import digest
from vidbench.scoring.language import foreign_script
from vidbench.scoring.model_call import JsonBlock, find_json

LABELS = ("a", "b", "c", "d")
_LIST_PREFIX = re.compile(r"^\s*\(?[a-dA-D][\).:]\s+")


class Question(TypedDict):
    """A generated question that passed the checks: options a..d -> text, the gold label."""

    question: str
    options: dict[str, str]
    answer: str


@dataclass(frozen=True)
class SubsetReply:
    """What one generation reply held: the question objects and why others were dropped."""

    questions: tuple[Question, ...]
    malformed: tuple[str, ...]


@dataclass(frozen=True)
class SubsetCandidate:
    """One generated question, before filtering."""

    id: str  # "<subset>/<video_id>#<n>"
    subset: str  # audio | visual
    video_id: str
    question: str
    options: dict[str, str]  # a..d -> text
    answer: str  # the gold label

    def as_dict(self) -> dict[str, JsonValue]:
        return asdict(self)


def _norm(text: str) -> str:
    """Text as compared for sameness: case, punctuation and spacing ignored."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _options(raw: object) -> dict[str, str]:
    if isinstance(raw, list):
        texts = [_LIST_PREFIX.sub("", str(t)) if isinstance(t, str) else t for t in raw]
        raw = dict(zip(LABELS, texts, strict=False)) if len(texts) == 4 else {}
    if not isinstance(raw, dict):
        raise ValueError("options are not an object of a, b, c, d")
    found = {}
    for key, text in raw.items():
        label = str(key).strip().strip("().: ").lower()
        if label not in LABELS or not isinstance(text, str) or not text.strip():
            raise ValueError(f"option {key!r} is not one of a-d with text")
        found[label] = " ".join(text.split())
    if sorted(found) != list(LABELS):
        raise ValueError(f"expected four options a-d, got {', '.join(sorted(found)) or 'none'}")
    if len({_norm(t) for t in found.values()}) != 4:
        raise ValueError("two options have the same text")
    return found


def _answer(raw: object, options: dict[str, str]) -> str:
    text = str(raw or "").strip()
    label = text.strip("().: ").lower()
    if label in LABELS:
        return label
    by_text = [k for k, v in options.items() if v.lower() == " ".join(text.split()).lower()]
    if len(by_text) == 1:
        return by_text[0]
    raise ValueError(f"answer {raw!r} is not one of the options")


def check_question(raw: JsonValue) -> Question:
    """A question object as {question, options, answer}; ValueError says what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("not a question object")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("no question text")
    options = _options(raw.get("options"))
    answer = _answer(raw.get("answer", raw.get("correct_answer_label")), options)
    script = foreign_script(" ".join([question, *options.values()]))
    if script is not None:
        raise ValueError(f"not in English ({script} letters)")
    return {"question": " ".join(question.split()), "options": options, "answer": answer}


def _holds_questions(block: JsonBlock) -> bool:
    if isinstance(block, list):
        return any(isinstance(item, dict) for item in block)
    return "questions" in block or "question" in block


def parse_generation(reply: str) -> SubsetReply | None:
    """The questions of a generator's reply; None when it holds no JSON with questions (a
    bracket in the prose before it, "[1]", is passed over)."""
    value: JsonValue = find_json(reply, _holds_questions)
    if isinstance(value, dict) and "questions" in value:
        value = value["questions"]
    elif isinstance(value, dict) and "question" in value:
        value = [value]
    if not isinstance(value, list):
        return None
    good: list[Question] = []
    bad: list[str] = []
    for i, raw in enumerate(value):
        try:
            good.append(check_question(raw))
        except ValueError as e:
            bad.append(f"question {i + 1}: {e}")
    return SubsetReply(tuple(good), tuple(bad))


def shuffled(question: Question, seed: int) -> Question:
    """The question with its options in a seeded order decided by the question itself."""
    rng = random.Random(digest([seed, question["question"], question["options"]]))
    order = list(LABELS)
    rng.shuffle(order)
    options = {new: question["options"][old] for new, old in zip(LABELS, order, strict=True)}
    answer = LABELS[order.index(question["answer"])]
    return {"question": question["question"], "options": options, "answer": answer}


@dataclass(frozen=True)
class Made:
    """A video's candidates from one reply, and the questions left out: repeats of an earlier
    one, and those past the number asked for."""

    candidates: list[SubsetCandidate]
    duplicates: int
    extra: int


def candidates(subset: str, video_id: str, generated: SubsetReply, seed: int, count: int) -> Made:
    """A video's candidates (options shuffled), at most `count` (a generator that writes ten
    where four were asked must not weigh its video more), and what was left out."""
    kept: list[SubsetCandidate] = []
    seen: set[str] = set()
    duplicates = 0
    for question in generated.questions:
        key = _norm(question["question"])
        if key in seen:
            duplicates += 1
            continue
        if len(kept) == count:
            continue
        seen.add(key)
        q = shuffled(question, seed)
        cid = f"{subset}/{video_id}#{len(kept)}"
        kept.append(
            SubsetCandidate(cid, subset, video_id, q["question"], q["options"], q["answer"])
        )
    return Made(kept, duplicates, len(generated.questions) - duplicates - len(kept))
