"""Recognise the question and the four options inside a 4D-Bench QA object.

The release does not pin down the field names (README.md): the official code just pastes the
object into the prompt. To offer options to baselines, reports and other prompt styles we look for
a question key and options given as a list, a dict, or one key per option, with or without "(A)"
prefixes. When nothing is recognisable we return None and the official rendering still works.
"""

from __future__ import annotations

import re

from pydantic import JsonValue

LETTERS = ("A", "B", "C", "D")
_OPTION_LIST_KEYS = ("options", "choices", "option", "choice", "answers", "candidates")
_PREFIX = re.compile(r"^\s*\(?([A-Da-d])\s*[\).:]\s*")
_OPTION_KEY = re.compile(r"^\s*(?:option|choice|answer)?\s*[_ ]?\(?([A-Da-d1-4])\)?\s*$", re.I)


def strip_option_prefix(text: str) -> str:
    """'(A) red' / 'A. red' / 'a) red' -> 'red'."""
    return _PREFIX.sub("", text, count=1).strip()


def _position(label: str) -> int | None:
    m = _OPTION_KEY.match(label)
    if not m:
        return None
    c = m.group(1).upper()
    return int(c) - 1 if c.isdigit() else LETTERS.index(c)


def find_question(rest: dict[str, JsonValue]) -> str | None:
    for key, value in rest.items():
        if "question" in key.lower() and isinstance(value, str) and value.strip():
            return value.strip()
    return None


def find_options(rest: dict[str, JsonValue]) -> tuple[str, ...] | None:
    """Four option texts in A..D order, or None when they are not recognisable."""
    for key, value in rest.items():
        if key.strip().lower() not in _OPTION_LIST_KEYS:
            continue
        texts = [v for v in value if isinstance(v, str)] if isinstance(value, list) else None
        if isinstance(value, list) and texts is not None and len(texts) == len(value):
            options = tuple(strip_option_prefix(v) for v in texts)
            return options if len(options) == 4 else None
        if isinstance(value, dict):
            return _from_keyed(value)
    return _from_keyed(rest)


def _from_keyed(mapping: dict[str, JsonValue]) -> tuple[str, ...] | None:
    slots: dict[int, str] = {}
    for key, value in mapping.items():
        position = _position(str(key))
        if position is not None and isinstance(value, str | int | float):
            slots[position] = strip_option_prefix(str(value))
    if sorted(slots) == [0, 1, 2, 3]:
        return tuple(slots[i] for i in range(4))
    return None


def missing_options(rest: dict[str, JsonValue], question: str | None) -> str | None:
    """Why a record whose options `find_options` does not recognise cannot be a four-option
    question, or None when some other field may hold them (the official prompt pastes the whole
    record, so unknown field names still work)."""
    for key, value in rest.items():
        if key.strip().lower() in _OPTION_LIST_KEYS and isinstance(value, list | dict):
            return f"{key!r} holds {len(value)} options, 4 expected"
    others = [k for k, v in rest.items() if v != question and v not in ("", None, [], {})]
    if not others:
        return "no options: the record holds a question and nothing that could be its options"
    return None
