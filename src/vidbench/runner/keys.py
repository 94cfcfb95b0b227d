"""Content hashes that key the store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from vidbench.core.files import Json
from vidbench.core.messages import Message, Part, TextPart


def digest(obj: object) -> str:
    """The SHA-256 of `obj` as canonical JSON (keys sorted; what JSON cannot hold, as text)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def prompt_fingerprint(messages: Sequence[Message]) -> list[JsonValue]:
    """Text parts verbatim, images by their provenance label (which view and frame) and the
    content they come from (the video's digest: an edited video's frames are other images)."""
    return [[m.role, [_part(p) for p in m.content]] for m in messages]


def _part(part: Part) -> JsonValue:
    if isinstance(part, TextPart):
        return part.text
    return ["image", part.label, part.source] if part.source else ["image", part.label]


def prompt_hash(messages: Sequence[Message]) -> str:
    return digest(prompt_fingerprint(messages))[:16]


def plan_key(task_settings: Mapping[str, Json], model_identity: Mapping[str, Json]) -> str:
    """Everything that decides the answers of a whole run, sample by sample."""
    return digest({"task": task_settings, "model": model_identity})[:24]


def request_key(plan: str, sample_id: str, messages: Sequence[Message]) -> str:
    """The store key of one request: the plan, the sample and the exact prompt."""
    return digest({"plan": plan, "sample": sample_id, "prompt": prompt_fingerprint(messages)})
