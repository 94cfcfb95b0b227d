"""A small MMWorld dataset for tests: the example record of PROTOCOLS.md / the MMWorld README
(eng_vid1) plus one video per discipline, every question type, every annotation flag both ways,
a question with three options and the usual video layouts, all written by the test."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vidbench.media.encode import write_mp4
from vidbench.testing import ChatServer
from vidbench.testing.chat_server import request_text

# The example entry of the official README (the record PROTOCOLS.md describes), verbatim.
README_RECORD: dict[str, Any] = {
    "video_id": "eng_vid1",
    "video_url": "https://youtu.be/-e1_QhJ1EhQ",
    "discipline": "Tech & Engineering",
    "subdiscipline": "Robotics",
    "captions": [
        "The humanoid robot Atlas interacts with objects and modifies the course to reach its goal."
    ],
    "questions": [
        {
            "type": "Explanation",
            "question": "Why is the engineer included at the beginning of the video?",
            "options": {
                "a": "The reason might be to imply the practical uses of Atlas in a commercial "
                "setting, to be an assistant who can perform complex tasks",
                "b": "To show how professional engineers can be forgetful sometimes",
                "c": "The engineer is controlling the robot manually",
                "d": "The engineer is instructing Atlas to build a house",
            },
            "answer": "The reason might be to imply the practical uses of Atlas in a commercial "
            "setting, to be an assistant who can perform complex tasks",
            "requires_domain_knowledge": False,
            "requires_audio": False,
            "requires_visual": True,
            "question_only": False,
            "correct_answer_label": "a",
        }
    ],
}

# The data's spellings ("Sports & Arts" is Table 3's "Art & Sports").
DATA_DISCIPLINES = (
    "Sports & Arts",
    "Business",
    "Science",
    "Health & Medicine",
    "Embodied Tasks",
    "Tech & Engineering",
    "Game",
)
TYPES = (
    "Explanation",
    "Counterfactual Thinking",
    "Future Prediction",
    "Domain Expertise",
    "Attribution Understanding",
    "Temporal Understanding",
    "Procedure Understanding",
)
THREE_OPTIONS = 5  # question number with options a..c only
FRAMES = 40


def shot_frames(lengths: tuple[int, ...], seed: int = 0, size: tuple[int, int] = (24, 32)):
    """Static shots of random texture, `lengths` frames each (a cut between shots)."""
    rng = np.random.default_rng(seed)
    frames = []
    for length in lengths:
        texture = rng.integers(0, 255, (*size, 3)).astype(np.uint8)
        frames += [texture] * length
    return frames


def question(n: int, video_id: str) -> dict[str, Any]:
    labels = "abc" if n == THREE_OPTIONS else "abcd"
    gold = labels[n % len(labels)]
    options = {label: f"option {label} of question {n}" for label in labels}
    return {
        "type": TYPES[n % len(TYPES)],
        "question": f"[q{n}] What happens next in {video_id}?",
        "options": options,
        "answer": options[gold],
        "requires_domain_knowledge": n % 3 == 0,
        "requires_audio": n % 4 == 1,
        "requires_visual": n % 2 == 0,
        "question_only": n % 5 == 2,
        "correct_answer_label": gold,
    }


def records() -> list[dict[str, Any]]:
    """7 video records, 2 questions each (14): eng_vid1's first one is the README question."""
    out = []
    for i, discipline in enumerate(DATA_DISCIPLINES):
        video_id = "eng_vid1" if discipline == "Tech & Engineering" else f"vid{i}"
        record = {
            "video_id": video_id,
            "video_url": f"https://example.org/{video_id}",
            "discipline": discipline,
            "subdiscipline": "Robotics" if video_id == "eng_vid1" else "Misc",
            "captions": [f"A video about {discipline}."],
            "questions": [question(2 * i, video_id), question(2 * i + 1, video_id)],
        }
        if video_id == "eng_vid1":
            record["questions"][0] = copy.deepcopy(README_RECORD["questions"][0])
        out.append(record)
    return out


# Where each video goes: the official layout and its variants.
LAYOUT = {
    "vid0": "vid0/vid0.mp4",
    "vid1": "vid1/vid1.MP4",
    "vid2": "vid2.mp4",  # flat
    "vid3": "vid3/clip.webm",  # the folder's single video
    "vid4": "vid4/vid4.mkv",
    "eng_vid1": "eng_vid1/eng_vid1.mp4",
    "vid6": "vid6/vid6.mp4",
}


def write_videos(root: Path, video_ids: list[str]) -> None:
    for k, video_id in enumerate(video_ids):
        lengths = (20, 6, 6, 8) if video_id == "vid0" else (FRAMES,)
        write_mp4(
            root / LAYOUT.get(video_id, f"{video_id}/{video_id}.mp4"), shot_frames(lengths, k)
        )


def make_mmworld(root: Path, data: list[dict[str, Any]] | None = None) -> Path:
    """`root/mmworld.json` and its videos; returns root."""
    data = records() if data is None else data
    root.mkdir(parents=True, exist_ok=True)
    (root / "mmworld.json").write_text(json.dumps(data, indent=1))
    write_videos(root, [r["video_id"] for r in data])
    return root


def rows(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same questions as a one-row-per-question export."""
    out = []
    for record in data:
        video = {k: v for k, v in record.items() if k not in ("questions", "captions")}
        out += [{**video, **q} for q in record["questions"]]
    return out


JUDGE_MARK = "Ground truth answer:"  # in MMWorld's judge prompt, in no question of records()


@contextmanager
def scripted_server(script: Mapping[str, tuple[str, str]]) -> Iterator[ChatServer]:
    """The fake chat server as the model and the judge of records(): a question whose prompt
    holds a marker of `script` ("[q3]") gets its (model reply, judge reply); the others are
    answered with their gold label and judged yes."""
    gold = {q["question"]: q["correct_answer_label"] for r in records() for q in r["questions"]}

    def reply(body: dict[str, Any]) -> str:
        text = request_text(body)
        marker = next((m for m in script if m in text), None)
        if JUDGE_MARK in text:
            return script[marker][1] if marker else "yes"
        if marker:
            return script[marker][0]
        return next(label for question, label in gold.items() if question in text)

    with ChatServer(reply=reply) as server:
        yield server


def judge_sends(server: ChatServer) -> int:
    """The judge calls the server was sent."""
    return sum(JUDGE_MARK in request_text(body) for body in server.requests)
