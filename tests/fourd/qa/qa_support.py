"""Objects and a scripted model for the `curate 4d qa` tests.

Three objects in the official layout: OBJ0 and OBJ1 with all 24 views, OBJ2 with only views 0
and 1 (the official FrameSpec needs 1, 8 and 16: "missing views"). The model is the fake chat
server with a `reply` function scripted per stage, read from the prompt: the generator's reply
per object and subtask (well-formed, no JSON, duplicate options, answer "E", a leak, a repeat),
the validator's verdict per question, and two blind models that answer a question correctly
when its text says so.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from conftest import write_object_views
from vidbench.testing import request_text

OBJ0, OBJ1, OBJ2 = (f"{i:032x}" for i in (10, 11, 12))


def write_objects(data: Path) -> Path:
    write_object_views(data, OBJ0, frames=12)
    write_object_views(data, OBJ1, frames=12)
    write_object_views(data, OBJ2, frames=12, views=2)
    return data


def curate_args(data: Path, out: Path, url: str, cache: Path, second_blind: str) -> list[str]:
    """`vidbench curate 4d qa` on `data` with the fake server at `url` as generator, validator
    and first blind model, and `second_blind` as the second."""
    return [
        "--no-progress", "curate", "4d", "qa", "--data", str(data), "--out", str(out),
        "--generator", f"openai-compat:{url}#generator",
        "--validator", f"openai-compat:{url}#validator",
        "--blind", f"openai-compat:{url}#blind1", "--blind", second_blind,
        "--cache-dir", str(cache),
    ]  # fmt: skip


def question(text: str, gold: str, others: tuple[str, str, str], answer: str = "A") -> dict:
    """A generator question with the gold text at `answer` (A, as generators like it)."""
    texts = list(others)
    texts.insert("ABCD".index(answer) if answer in "ABCD" else 0, gold)
    return {"question": text, "options": dict(zip("ABCD", texts, strict=True)), "answer": answer}


# Markers in the question text script the later stages.
BLIND_BOTH = "(both blind right)"  # both blind models answer correctly: dropped
BLIND_ONE = "(one blind right)"  # only the first: kept
WRONG_SUBTASK = "(wrong subtask)"  # the validator rejects it

GOOD = {
    (OBJ0, "object_counting"): [
        question(
            f"How many legs does the walking figure lift at once {BLIND_ONE}?",
            "Two",
            ("One", "Three", "Four"),
        ),
        question("How many wheels turn?", "Four", ("Four", "Two", "Six")),  # duplicate options
    ],
    (OBJ0, "motion"): [
        question("What does the arm do?", "Waves", ("Spins", "Falls", "Stays")) | {"answer": "E"},
        question(
            "The cat jumps onto the table: what does the cat do?",
            "Jumps onto the table",
            ("Sleeps", "Runs away", "Eats"),
        ),  # the answer stands in the question
        question(
            "How does the tail move?", "Swings side to side", ("Spins", "Stays still", "Curls up")
        ),
    ],
    (OBJ0, "spatial_relationship"): [
        question(f"What colour is the hat {WRONG_SUBTASK}?", "Red", ("Blue", "Green", "Black")),
    ],
    (OBJ0, "appearance"): [
        question(
            f"What is the sky's colour on a clear day {BLIND_BOTH}?",
            "Blue",
            ("Purple", "Orange", "Brown"),
        ),
    ],
    (OBJ1, "object_counting"): [
        question("How many fins does the fish show?", "Three", ("Two", "Four", "Five"), "C"),
    ],
    (OBJ1, "temporal_relationship"): [
        question(
            "What happens after the door opens?",
            "A bird flies out",
            ("It closes", "Smoke rises", "Nothing"),
        ),
    ],
    (OBJ1, "motion"): [
        question(
            "What does the robot do with its arm?", "Lifts a box", ("Waves", "Points", "Claps"), "B"
        ),
    ],
    (OBJ1, "spatial_relationship"): [
        question(
            "Where is the handle relative to the spout?",
            "Opposite it",
            ("Above it", "Below it", "Beside it"),
            "D",
        ),
    ],
    (OBJ1, "appearance"): [
        question("What material does the shell look like?", "Metal", ("Wood", "Glass", "Cloth")),
        question("What material does the shell look like?", "Metal", ("Wood", "Glass", "Stone")),
    ],
}
SUFFIX_OF = {
    "Object Counting": "object_counting",
    "Temporal Relationship": "temporal_relationship",
    "Action": "motion",
    "Spatial Relationship": "spatial_relationship",
    "Appearance": "appearance",
}
GOLD = {q["question"]: q["options"].get(q["answer"]) for qs in GOOD.values() for q in qs}


class Oracle:
    """The fake server's reply function; `seen` counts requests per stage."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> str:
        text = request_text(body)
        if "You are writing multiple-choice questions" in text:
            self.seen["generate"] += 1
            return self.generate(text)
        if "You check multiple-choice questions" in text:
            self.seen["validate"] += 1
            return self.validate(text)
        self.seen[f"blind {body['model']}"] += 1
        return self.blind(text, body["model"])

    def generate(self, text: str) -> str:
        uid = re.search(r"They show object (\w+)\.", text).group(1)  # type: ignore[union-attr]
        subtask = re.search(r"Subtask: ([A-Za-z ]+)\.", text).group(1)  # type: ignore[union-attr]
        questions = GOOD.get((uid, SUFFIX_OF[subtask]))
        if questions is None:
            return "I looked at the object carefully but I cannot think of a question."
        block = json.dumps({"questions": questions})
        return f"The object moves.\n```json\n{block}\n```"

    def validate(self, text: str) -> str:
        if WRONG_SUBTASK in text:
            verdict = {"verdict": "reject", "reason": "wrong subtask", "explanation": "colour"}
        else:
            verdict = {"verdict": "accept", "reason": "ok", "explanation": "fine"}
        return f"Checked.\n```json\n{json.dumps(verdict)}\n```"

    def blind(self, text: str, model: str) -> str:
        question = re.search(r"Question: (.*)", text).group(1)  # type: ignore[union-attr]
        options = dict(re.findall(r"^\(([A-D])\) (.*)$", text, re.M))
        gold = next(k for k, v in options.items() if v == GOLD[question])
        right = BLIND_BOTH in question or (BLIND_ONE in question and model == "blind1")
        wrong = next(k for k in "ABCD" if k != gold)
        return f"({gold if right else wrong})"


# ---- the rendered layout of part 1 and a model that answers anything well

R_GOOD, R_DROPPED, R_TEXTURELESS, R_BROKEN = (f"{i:032x}" for i in (20, 21, 22, 23))


def rendered_folder(root: Path) -> Path:
    """<uid>/view_K_rgb_white_bg.mp4 + render.json and quality.jsonl, as part 1 leaves them."""
    for uid in (R_GOOD, R_DROPPED, R_TEXTURELESS, R_BROKEN):
        write_object_views(root, uid, frames=8)
    folder = root / "4d_object_multi_view_videos"
    (folder / R_DROPPED / "render.json").write_text(
        json.dumps({"status": "dropped", "reason": "no motion"})
    )
    (folder / R_BROKEN / "view_8_rgb_white_bg.mp4").write_bytes(b"not a video")
    labels = [(R_GOOD, "high quality"), (R_TEXTURELESS, "textureless"), (R_BROKEN, "high quality")]
    (folder / "quality.jsonl").write_text(
        "".join(json.dumps({"uid": u, "label": label}) + "\n" for u, label in labels)
    )
    return folder


def generic(body: dict[str, Any]) -> str:
    """One fine question per object and subtask; every check passes; the blind models pick the
    option "wrong guess", wherever the shuffle put it."""
    text = request_text(body)
    if "You are writing" in text:
        uid = re.search(r"object (\w+)\.", text).group(1)  # type: ignore[union-attr]
        subtask = re.search(r"Subtask: ([A-Za-z ]+)\.", text).group(1)  # type: ignore[union-attr]
        question = {
            "question": f"{subtask} question about {uid}?",
            "options": {"A": "right", "B": "wrong guess", "C": "other", "D": "another"},
            "answer": "A",
        }
        return json.dumps({"questions": [question]})
    if "You check" in text:
        return '{"verdict": "accept", "reason": "ok"}'
    if "Describe the object" in text:
        return "A small cube that turns slowly."
    letter = re.search(r"^\(([A-D])\) wrong guess$", text, re.M).group(1)  # type: ignore[union-attr]
    return f"({letter})"
