"""Mapping an MMWorld reply to an option label.

`official`: the MMWorld script's `answer_post_processing` (text before the first ".", "The answer
is" removed, stripped, lowercased, quotes stripped, text before the first ":"), then an exact
match against the labels: "b", "B.", "The answer is b. Because ..." map; "(b)", "b) text",
"Option b" and the option's text do not.

`letter-or-text` (vidbench's default): the official mapping first; then a lone label, possibly
bracketed ("(b)", "b)", "[B]"); a label after "answer is", "answer:", "option" or "choice"; a
label leading the reply ("b) ...", "B: ..."); and finally the option text itself, when the reply
contains exactly one option's full text (or one option's text contains the reply). Letters are
only taken when they are among the question's labels, so the article "a" in prose is never read
as option a unless it stands as a label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vidbench.core.errors import ConfigError

PARSERS = ("official", "letter-or-text")

# The official script's stop sequence for its GPT prompts; the API stopped at it, so a reply
# carrying it is cut there before parsing.
END_MARK = "{END}"


def official_post_processing(reply: str) -> str:
    """MMWorld's `answer_post_processing`, step for step."""
    processed = reply.split(".")[0].replace("The answer is", "").strip().lower().strip("\"'")
    return processed.split(":")[0].strip()


def strip_end_mark(reply: str) -> str:
    return reply.split(END_MARK)[0]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _stands_alone(reply: str, match: re.Match[str]) -> bool:
    """A bracketed letter is a label; a bare one too, unless it is the article "a" starting a
    phrase ("the answer is a robot")."""
    bracketed = match.group(0).rstrip().endswith((")", "]"))
    rest = reply[match.end() :]
    return bracketed or match.group(1).lower() != "a" or not re.match(r"\s+[A-Za-z]", rest)


def _letter(reply: str, labels: tuple[str, ...]) -> str | None:
    letters = "".join(labels)
    patterns = (
        rf"^\W*[\(\[]?([{letters}])[\)\]]?\W*$",  # "b", "(b)", "B.", "[b]"
        rf"\banswer\s*(?:is|:)?\s*(?:option\s*)?[\(\[]?([{letters}])\b[\)\]]?",
        rf"\b(?:option|choice)\s*[\(\[]?([{letters}])\b[\)\]]?",
        rf"^\s*[\(\[]?([{letters}])[\)\]\.:]\s",  # "b) text", "B: text", "(c) text"
    )
    for pattern in patterns:
        for match in re.finditer(pattern, reply, flags=re.IGNORECASE):
            if _stands_alone(reply, match):
                return match.group(1).lower()
    return None


def _by_text(reply: str, options: Mapping[str, str]) -> str | None:
    said = _norm(reply)
    if not said:
        return None
    texts = {label: _norm(text) for label, text in options.items()}
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


def parse_answer(reply: str | None, options: Mapping[str, str], parser: str) -> str | None:
    """The label ("a".."d") a reply chose among `options` (label -> text), or None."""
    if parser not in PARSERS:
        raise ConfigError(f"unknown MMWorld answer parser {parser!r} ({', '.join(PARSERS)})")
    if reply is None:
        return None
    reply = strip_end_mark(reply)
    processed = official_post_processing(reply)
    if processed in options:
        return processed
    if parser == "official":
        return None
    labels = tuple(options)
    return _letter(reply, labels) or _by_text(reply, options)
