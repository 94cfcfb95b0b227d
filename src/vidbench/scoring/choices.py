"""Option-letter extraction from a model's reply."""

from __future__ import annotations

import re

from vidbench.core.errors import ConfigError

# The official output processor of 4D-Bench's QA (supplement section D.2), pattern for
# pattern: the first "(X)", else the first capital A-D standing alone between whitespace or
# punctuation. Case-sensitive.
_OFFICIAL_PAREN = re.compile(r"\(([A-D])\)")
_OFFICIAL_ISOLATED = re.compile(r"(?:^|[\s\(\.,;:])([A-D])(?:[\s\)\.,;:]|$)")

PROTOCOLS = ("official",)


def _official(text: str) -> str | None:
    matches = _OFFICIAL_PAREN.findall(text)
    if matches:
        return matches[0]
    matches = _OFFICIAL_ISOLATED.findall(text)
    if matches:
        return matches[0]
    return None


def extract_choice(text: str | None, protocol: str = "official") -> str | None:
    """The option letter ("A".."D") a reply chose, or None when it cannot be parsed."""
    if protocol not in PROTOCOLS:
        raise ConfigError(
            f"unknown choice-extraction protocol {protocol!r} ({', '.join(PROTOCOLS)})"
        )
    if text is None:
        return None
    return _official(text)
