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
    """A bracketed letter is a label, and so is one after "option" or "choice" ("option a is
    right"); a bare one too, unless it is the article "a" starting a phrase ("the answer is a
    robot", "Answer: A robot"; but "the answer is A because" names option A)."""
    bracketed = match.group(0).rstrip().endswith((")", "]"))
    named_option = re.search(r"option|choice", match.group(0), re.IGNORECASE) is not None
    letter, before = match.group(1), reply[: match.start(1)]
    starts_sentence = re.search(r"(?:^|[:.!?])\s*$", before) is not None
    article = (letter == "a" or (letter == "A" and starts_sentence)) and (
        re.match(r"\s+[A-Za-z]", reply[match.end() :]) is not None
    )
    return bracketed or named_option or not article


def _negated(reply: str, match: re.Match[str]) -> bool:
    """The label is ruled out, not chosen: "not option a", "not (b)"."""
    return re.search(r"(?:\bnot|\bnever|n't)\s*$", reply[: match.start()], re.I) is not None


def _named(pattern: str, reply: str, by_lower: Mapping[str, str]) -> set[str]:
    """The labels a pattern's matches name as chosen (standing alone, not negated)."""
    return {
        by_lower[match.group(1).lower()]
        for match in re.finditer(pattern, reply, flags=re.IGNORECASE)
        if _stands_alone(reply, match) and not _negated(reply, match)
    }


def label_in_reply(reply: str, labels: tuple[str, ...]) -> str | None:
    """The label (as `labels` spell it) the reply names, or None. A reply that names several
    labels the same way ("option a or option b"), or brackets several ("(a) or (b)"), chose
    none of them."""
    by_lower = {label.lower(): label for label in labels}
    letters = re.escape("".join(labels))
    if len(_named(rf"[\(\[]([{letters}])[\)\]]", reply, by_lower)) > 1:
        return None
    patterns = (
        rf"^\W*[\(\[]?([{letters}])[\)\]]?\W*$",  # "b", "(b)", "B.", "[b]"
        rf"\banswer\s*(?:is|:)?\s*(?:option\s*)?[\(\[]?([{letters}])\b[\)\]]?",
        rf"\b(?:option|choice)\s*[\(\[]?([{letters}])\b[\)\]]?",
        rf"^\s*[\(\[]?([{letters}])[\)\]\.:]\s",  # "b) text", "B: text", "(c) text"
    )
    for pattern in patterns:
        named = _named(pattern, reply, by_lower)
        if named:
            return named.pop() if len(named) == 1 else None
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
