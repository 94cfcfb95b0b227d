"""Videos and a scripted model for the curation tests.

The videos: `workshop` speaks one sentence (espeak-ng) over frames of a red disc; `silent` has
no audio stream (a blue disc); `quiet` has a silent audio track (a green disc); `broken` is not
a video at all. The model is the fake chat server with a `reply` function that behaves like an
honest oracle: it writes questions from what its prompt holds (the transcript, or the colour of
the frames it is sent) and answers a check only from the evidence the check gives it.
"""

from __future__ import annotations

import base64
import io
import json
import re
import wave
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vidbench.testing import request_text
from vidbench.testing.speech import shape_frames, speak, wav_seconds, write_talking_video

SPEECH = "Welcome to the workshop. Today we will build a wooden birdhouse with a hammer and nails."
FPS = 12
COLOURS = {"red": (220, 30, 30), "blue": (30, 30, 220), "green": (30, 200, 30)}
BIRDHOUSE = {
    "question": "What does the speaker say they will build?",
    "options": {
        "a": "A wooden birdhouse",
        "b": "A metal bridge",
        "c": "A paper kite",
        "d": "A glass vase",
    },
    "answer": "a",
}
BLIND = {
    "question": "What is two plus two?",
    "options": {"a": "3", "b": "4", "c": "5", "d": "22"},
    "answer": "b",
}
MALFORMED = {"question": "Which tool is named?", "options": {"a": "Hammer", "b": "Saw"}}
COLOUR_QUESTION = "What colour is the disc that moves across the frames?"


def write_videos(root: Path) -> Path:
    """VIDEOS/<discipline>/<subdiscipline>/... as a user would lay them out."""
    wav = speak(SPEECH, root.parent / "speech.wav")
    frames = int(wav_seconds(wav) * FPS) + FPS
    tech = root / "Tech & Engineering" / "Woodworking"
    write_talking_video(tech / "workshop.mp4", shape_frames(frames, COLOURS["red"]), wav, FPS)
    science = root / "Science"
    write_talking_video(science / "silent.mp4", shape_frames(24, COLOURS["blue"]), None, FPS)
    silence = root.parent / "silence.wav"
    with wave.open(str(silence), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(np.zeros(16000 * 3, np.int16).tobytes())
    write_talking_video(science / "quiet.mp4", shape_frames(36, COLOURS["green"]), silence, FPS)
    (science / "broken.mp4").write_bytes(b"this is not a video" * 100)
    return root


def image_colours(body: dict[str, Any]) -> list[str]:
    """The colour name of the disc in each image of an OpenAI chat request."""
    names = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") != "image_url":
                continue
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).reshape(-1, 3)
            vivid = pixels[np.ptp(pixels.astype(int), axis=1) > 100]
            mean = vivid.mean(axis=0)
            names.append(min(COLOURS, key=lambda c: float(np.abs(mean - COLOURS[c]).sum())))
    return names


def options_in(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([a-d])\. (.+)$", text, flags=re.MULTILINE))


def label_of(options: dict[str, str], wanted: str) -> str:
    return next(k for k, v in options.items() if v.lower() == wanted.lower())


def _wrong(options: dict[str, str], truth: str | None) -> str:
    return next(k for k, v in options.items() if truth is None or v.lower() != truth.lower())


class Oracle:
    """The fake model's `reply` function; counts the prompts it saw by kind."""

    def __init__(self, unparsed_first: set[str] = frozenset()) -> None:
        self.seen: Counter[str] = Counter()
        self.unparsed_first = set(unparsed_first)  # prompt kinds answered badly the first time

    def __call__(self, body: dict[str, Any]) -> str:
        text = request_text(body)
        kind = self._kind(text)
        self.seen[kind] += 1
        if kind in self.unparsed_first and self.seen[kind] == 1:
            return "Sure! Here are some great questions about this video."
        if kind == "audio-generation":
            return json.dumps({"questions": [BIRDHOUSE, BLIND, MALFORMED]})
        if kind == "visual-generation":
            [colour, *_] = image_colours(body)
            options = {"a": "green", "b": "red", "c": "blue", "d": "yellow"}
            question = {"question": COLOUR_QUESTION, "options": options, "answer": colour}
            return "```json\n" + json.dumps({"questions": [question]}) + "\n```"
        if kind == "other":  # an evaluated model's question (vidbench run)
            return "a"
        return "(" + self._check(text, kind, body) + ")"

    @staticmethod
    def _kind(text: str) -> str:
        if "understands the AUDIO" in text:
            return "audio-generation"
        if "understands the VISUAL" in text:
            return "visual-generation"
        if "using only this transcript" in text:
            return "transcript-check"
        if "using only the video frames" in text:
            return "keyframes-check"
        if "without the video" in text:
            return "blind-check"
        return "other"

    @staticmethod
    def _check(text: str, kind: str, body: dict[str, Any]) -> str:
        options = options_in(text)
        question = text.split("Question: ", 1)[1].splitlines()[0]
        if question == BLIND["question"]:  # general knowledge: right from any evidence
            return label_of(options, "4")
        if question == BIRDHOUSE["question"]:
            heard = kind == "transcript-check" and "bird" in text.lower()
            truth = BIRDHOUSE["options"]["a"]
            return label_of(options, truth) if heard else _wrong(options, truth)
        if question == COLOUR_QUESTION:  # without the frames, a guess no disc has
            seen = kind == "keyframes-check"
            return label_of(options, image_colours(body)[0] if seen else "yellow")
        return _wrong(options, None)
