"""Reading structured data out of a model's free-text reply."""

from __future__ import annotations

import json
import re

from pydantic import JsonValue

_FENCE = re.compile(r"```(?:json)?")


def find_json(reply: str) -> dict[str, JsonValue] | list[JsonValue] | None:
    """The first JSON object or list in a reply (code fences and prose around it are
    tolerated), or None when there is none."""
    text = _FENCE.sub("", reply)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
        if isinstance(value, list):
            return value
    return None
