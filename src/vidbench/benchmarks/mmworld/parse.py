"""Mapping an MMWorld reply to an option label.

`official`: the MMWorld script's `answer_post_processing` (text before the first ".", "The answer
is" removed, stripped, lowercased, quotes stripped, text before the first ":"), then an exact
match against the labels: "b", "B.", "The answer is b. Because ..." map; "(b)", "b) text",
"Option b" and the option's text do not.

`letter-or-text` (vidbench's default): the official mapping first, unless another sentence of the
reply maps to another label ("A. B. C. D." names no one option); then the label or the option
text the reply names (scoring/option_text.py: a lone or bracketed label, a label after "answer
is" / "option", a label leading the reply, or exactly one option's text; never several labels
named alike, nor one ruled out: "option a or option b", "not (a)").
"""

from __future__ import annotations

from collections.abc import Mapping

from vidbench.core.errors import ConfigError
from vidbench.scoring.option_text import letter_or_text

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


def parse_answer(reply: str | None, options: Mapping[str, str], parser: str) -> str | None:
    """The label ("a".."d") a reply chose among `options` (label -> text), or None."""
    if parser not in PARSERS:
        raise ConfigError(f"unknown MMWorld answer parser {parser!r} ({', '.join(PARSERS)})")
    if reply is None:
        return None
    reply = strip_end_mark(reply)
    processed = official_post_processing(reply)
    if parser == "official":
        return processed if processed in options else None
    # the official mapping reads the first sentence only: "A. B. C. D." would be a
    sentences = {official_post_processing(s) for s in reply.split(".")} & set(options)
    if len(sentences) > 1:
        return None
    if processed in options:
        return processed
    return letter_or_text(reply, options)
