"""AutoEval-Video's style of LLM judging, for any benchmark with per-instance rules.

The rule is a judge prompt holding the marker `[Answer to be judged]:`; the answer is inserted
after it exactly as AutoEval-Video's official script does. The judge writes its reasoning and
ends with a line "1" (correct) or "0" (incorrect). Two readers of that reply:

- `parse_official`: the official `check_judge`: split on "\\n"; the first line must be non-empty
  and not itself "0"/"1", the last line must be exactly "0" or "1".
- `parse_robust`: the last non-empty line, stripped of spaces and markdown (`**1**`, `# 1`,
  `` `1` ``, `> 1`, `- 1`; "-1" stays a negative number, no verdict), may be "1", "1.",
  "Score: 1", "Final verdict: 0", "Result - 1", "1/1"; the reason (everything before it) may be
  empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANSWER_MARKER = "[Answer to be judged]:"


def assemble_prompt(rule: str, answer: str) -> str:
    """The official assembly, character for character."""
    return rule.replace(ANSWER_MARKER, f"{ANSWER_MARKER} " + answer + "\n")


@dataclass(frozen=True)
class Judgment:
    """A parsed judge reply: 1 (correct) or 0 (incorrect), and the reasoning before it."""

    verdict: int
    reason: str


def parse_official(reply: str) -> Judgment | None:
    lines = reply.split("\n")
    first, last = lines[0], lines[-1]
    if len(first) < 1 or last not in ("0", "1") or first in ("0", "1"):
        return None
    return Judgment(int(last), "\n".join(lines[:-1]))


_LABELS = r"score|result|verdict|judge?ment|answer|output|conclusion|rating|grade|evaluation"
_ROBUST_LAST = re.compile(
    rf"^(?:(?:final\s+)?(?:{_LABELS})\s*[:=\-]?\s*)?([01])(?:\s*/\s*1)?\s*[.!]?$", re.IGNORECASE
)
_MARKDOWN = str.maketrans("", "", "*`_[]")
_LEADING_MARKS = re.compile(r"^[#>\s]*(?:-\s+)?")


def parse_robust(reply: str) -> Judgment | None:
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return None
    # a heading, quote or bullet mark goes; a minus sign stays: "-1" is no verdict, never 1
    last = _LEADING_MARKS.sub("", lines[-1].translate(_MARKDOWN)).strip()
    match = _ROBUST_LAST.match(last)
    if match is None:
        return None
    return Judgment(int(match.group(1)), "\n".join(lines[:-1]))
