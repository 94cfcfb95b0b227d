"""Which option a free-form reply chose, by its label or by the option's own text.

`letter_or_text` (MMWorld's `letter-or-text` parser, and declared benchmarks' `option-text`):
a lone label, possibly bracketed ("(b)", "b)", "[B]"); a label after "answer is", "answer:",
"option" or "choice"; a label leading the reply ("b) ...", "B: ..."); and finally the option text
itself, when the reply contains exactly one option's full text (or one option's text contains the
reply). Labels are only taken when they are among the question's, and the article "a" in prose is
never read as option a unless it stands as a label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping


def normalize(text: str) -> str:
    """Lower case, punctuation as spaces, whitespace collapsed: "The Cat." -> "the cat"."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _stands_alone(reply: str, match: re.Match[str]) -> bool:
    """A bracketed letter is a label; a bare one too, unless it is the article "a" starting a
    phrase ("the answer is a robot")."""
    bracketed = match.group(0).rstrip().endswith((")", "]"))
    rest = reply[match.end() :]
    return bracketed or match.group(1).lower() != "a" or not re.match(r"\s+[A-Za-z]", rest)


def label_in_reply(reply: str, labels: tuple[str, ...]) -> str | None:
    """The label (as `labels` spell it) the reply names, or None."""
    by_lower = {label.lower(): label for label in labels}
    letters = re.escape("".join(labels))
    patterns = (
        rf"^\W*[\(\[]?([{letters}])[\)\]]?\W*$",  # "b", "(b)", "B.", "[b]"
        rf"\banswer\s*(?:is|:)?\s*(?:option\s*)?[\(\[]?([{letters}])\b[\)\]]?",
        rf"\b(?:option|choice)\s*[\(\[]?([{letters}])\b[\)\]]?",
        rf"^\s*[\(\[]?([{letters}])[\)\]\.:]\s",  # "b) text", "B: text", "(c) text"
    )
    for pattern in patterns:
        for match in re.finditer(pattern, reply, flags=re.IGNORECASE):
            if _stands_alone(reply, match):
                return by_lower.get(match.group(1).lower())
    return None


def option_by_text(reply: str, options: Mapping[str, str]) -> str | None:
    """The label whose option text the reply holds (label -> text), or None."""
    said = normalize(reply)
    if not said:
        return None
    texts = {label: normalize(text) for label, text in options.items()}
    inside = [label for label, text in texts.items() if text and text in said]
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:  # keep the longest when it contains all the others
        longest = max(inside, key=lambda label: len(texts[label]))
        if all(texts[label] in texts[longest] for label in inside):
            return longest
        return None
    containing = [label for label, text in texts.items() if said in text]
    return containing[0] if len(containing) == 1 and len(said) >= 8 else None


def letter_or_text(reply: str, options: Mapping[str, str]) -> str | None:
    """The label a reply chose among `options` (label -> text), by label or by text."""
    return label_in_reply(reply, tuple(options)) or option_by_text(reply, options)
