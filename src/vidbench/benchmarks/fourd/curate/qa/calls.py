"""The model calls of `curate 4d qa`, each a ModelCall sent through runner/model_calls.ask_model (so
every reply is stored in OUT/store.sqlite and never asked twice).

- generate: per object and subtask, the object's frames (the FrameSpec) and the subtask's
  chain-of-thought prompt; the reply is parsed strictly (candidates.parse_generation).
- validate: per candidate, the same frames, the subtask's guidelines and the question; a verdict
  (accept / reject) with a reason from a fixed list, so rejects can be counted by reason.
- blind: per candidate, the question and options alone (text only); the chosen letter.

Image labels carry the object uid and a hash of its views' bytes: the store key fingerprints an
image by its label, so two objects whose frames share a view and time must not share a label,
and an object whose videos changed must not be answered from the replies about the old ones.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from functools import partial

from vidbench.benchmarks.fourd.curate.qa.candidates import (
    SUBTASKS,
    Candidate,
    Generated,
    Validation,
    parse_generation,
)
from vidbench.benchmarks.fourd.curate.qa.objects import QAObject
from vidbench.benchmarks.fourd.prompt import frames_sentence, image_parts
from vidbench.core.messages import ImagePart, Message, Part, TextPart, user
from vidbench.core.requests import GenerationConfig
from vidbench.media.cache import FrameCache
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec
from vidbench.runner.keys import digest
from vidbench.scoring.choices import extract_choice
from vidbench.scoring.model_call import ModelCall, find_json
from vidbench.scoring.prompt_files import PromptFile, load_prompt

PACKAGE = "vidbench.benchmarks.fourd.curate.qa"
LABEL = "fourd-qa"
GENERATE_SETTINGS = GenerationConfig(temperature=0.0, max_tokens=4096)
VALIDATE_SETTINGS = GenerationConfig(temperature=0.0, max_tokens=2048)
BLIND_SETTINGS = GenerationConfig(temperature=0.0, max_tokens=16)
REJECT_REASONS = (
    "wrong answer",
    "several correct answers",
    "options not distinct or implausible",
    "answerable without the video",
    "wrong subtask",
    "unclear question",
)


def prompt(name: str) -> PromptFile:
    return load_prompt(PACKAGE, f"{name}.v1.txt", LABEL)


def guidelines(subtask: str) -> PromptFile:
    return prompt(f"subtask_{SUBTASKS[subtask]}")


def object_images(obj: QAObject, spec: FrameSpec, cache: FrameCache) -> tuple[Part, ...]:
    """The object's frames as the FrameSpec lays them out, labelled with its uid and a hash of
    the views' bytes (a re-rendered object is asked about afresh, never answered from the
    replies about its old videos); MediaError when a view cannot be read."""
    parts = image_parts(load_frames(obj.media, spec, cache), spec)
    content = digest([cache.video_digest(obj.media.videos[view]) for view in spec.views])[:16]
    return tuple(
        replace(p, label=f"{obj.uid} {content} {p.label}") if isinstance(p, ImagePart) else p
        for p in parts
    )


def options_text(options: dict[str, str]) -> str:
    return "\n".join(f"({letter}) {text}" for letter, text in options.items())


def generate_call(
    obj: QAObject, subtask: str, images: tuple[Part, ...], spec: FrameSpec, count: int
) -> ModelCall[Generated]:
    template, rules = prompt("generate"), guidelines(subtask)
    text = template.render(
        frames_sentence=frames_sentence(spec),
        uid=obj.uid,
        subtask=subtask,
        guidelines=rules.template.template.strip(),
        count=count,
    )
    version = f"{template.version}+{rules.version}"
    message = Message("user", (*images, TextPart(text)))
    item = f"generate/{obj.uid}/{SUBTASKS[subtask]}"
    parse = partial(parse_generation, count=count)
    return ModelCall(item, (message,), version, parse, GENERATE_SETTINGS)


def parse_validation(reply: str) -> Validation | None:
    """{"accept": bool, "reason": str, "explanation": str}, or None when unreadable. A reject
    whose reason is not on the list counts as "other"."""
    value = find_json(reply, lambda block: isinstance(block, dict) and "verdict" in block)
    if not isinstance(value, dict):
        return None
    verdict = str(value.get("verdict", "")).strip().lower()
    if verdict not in ("accept", "reject"):
        return None
    reason = " ".join(str(value.get("reason", "")).lower().split())
    if verdict == "reject" and reason not in REJECT_REASONS:
        reason = "other"
    explanation = str(value.get("explanation", ""))[:500]
    return {"accept": verdict == "accept", "reason": reason, "explanation": explanation}


def validate_call(
    candidate: Candidate, images: tuple[Part, ...], spec: FrameSpec
) -> ModelCall[Validation]:
    template, rules = prompt("validate"), guidelines(candidate.subtask)
    text = template.render(
        frames_sentence=frames_sentence(spec),
        uid=candidate.uid,
        subtask=candidate.subtask,
        guidelines=rules.template.template.strip(),
        question=candidate.question,
        options=options_text(candidate.options),
        answer=f"({candidate.answer})",
    )
    version = f"{template.version}+{rules.version}"
    message = Message("user", (*images, TextPart(text)))
    item = f"validate/{candidate.id}"
    return ModelCall(item, (message,), version, parse_validation, VALIDATE_SETTINGS)


def parse_blind(reply: str) -> str:
    """The letter chosen, or "" for a reply that names none (a blind model that cannot answer
    has not answered correctly; asking it again would not make it see). Full-width forms, as a
    model writing Chinese or Japanese puts them ("（B）", "Ｂ"), read as their ASCII letters:
    read as none, a blind model's right answer kept a question it should have dropped."""
    return extract_choice(unicodedata.normalize("NFKC", reply)) or ""


def blind_call(candidate: Candidate) -> ModelCall[str]:
    template = prompt("blind")
    text = template.render(question=candidate.question, options=options_text(candidate.options))
    item = f"blind/{candidate.id}"
    return ModelCall(item, (user(text),), template.version, parse_blind, BLIND_SETTINGS)
