"""Option-letter extraction from a model's reply.

Three readings, each over the letters of the question's options (A-D by default):
- `extract_choice` (protocol `official`): 4D-Bench's output processor (supplement D.2);
- `strict_letter`: the reply is one letter and nothing else but brackets and punctuation;
- `videomme_choice`: Video-MME's `extract_characters_regex` (its evaluation script).
"""

from __future__ import annotations

import re
import string
from functools import cache

from vidbench.core.errors import ConfigError

LETTERS = "ABCD"
PROTOCOLS = ("official",)


def option_letters(n: int) -> str:
    """The labels of `n` options: "ABCD" for four."""
    if not 1 <= n <= len(string.ascii_uppercase):
        raise ConfigError(f"{n} options: between 1 and 26 can be labelled A..Z")
    return string.ascii_uppercase[:n]


@cache
def _official_patterns(letters: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # The official output processor of 4D-Bench's QA (supplement section D.2), pattern for
    # pattern: the first "(X)", else the first capital letter standing alone between whitespace
    # or punctuation. Case-sensitive. Its letters are A-D; other option counts use theirs.
    group = f"[{re.escape(letters)}]"
    return (
        re.compile(rf"\(({group})\)"),
        re.compile(rf"(?:^|[\s\(\.,;:])({group})(?:[\s\)\.,;:]|$)"),
    )


def extract_choice(
    text: str | None, protocol: str = "official", letters: str = LETTERS
) -> str | None:
    """The option letter a reply chose, or None when it cannot be parsed."""
    if protocol not in PROTOCOLS:
        raise ConfigError(
            f"unknown choice-extraction protocol {protocol!r} ({', '.join(PROTOCOLS)})"
        )
    if text is None:
        return None
    for pattern in _official_patterns(letters):
        matches: list[str] = pattern.findall(text)
        if matches:
            return matches[0]
    return None


def strict_letter(text: str | None, letters: str = LETTERS) -> str | None:
    """The letter when the whole reply is one option letter ("B", "(b)", "B.", "[B]"), else
    None: anything more (prose, two letters) is unparsed."""
    if text is None:
        return None
    match = re.fullmatch(rf"\W*([{re.escape(letters)}])\W*", text.strip(), flags=re.IGNORECASE)
    return match.group(1).upper() if match else None


# Video-MME's evaluation script (evaluation/eval_your_results.py, `extract_characters_regex`)
# strips these phrases. Its list lacks two commas, so two pairs of phrases are one string each
# (e.g. "The best option isThe correct option is"); kept as the script has it.
_VIDEOMME_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",
    "Best answer:Best option:",
)


def videomme_choice(text: str | None, letters: str = LETTERS) -> str | None:
    """Video-MME's extraction, step for step: strip the reply and the answer phrases; a reply
    of more than ten words without any option letter is unparsed; else the first option letter
    anywhere (case-sensitive, so the "A" of "A man" counts, as in the script)."""
    if text is None:
        return None
    s = text.strip()
    for prefix in _VIDEOMME_PREFIXES:
        s = s.replace(prefix, "")
    match = re.search(f"[{re.escape(letters)}]", s)
    if match is None:  # also covers the script's "more than ten words and no letter" rule
        return None
    return match.group(0)
