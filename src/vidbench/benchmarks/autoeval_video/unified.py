"""The unified-prompt baseline judge of AutoEval-Video (AutoEval-Video paper section 7.2, Table 3).

One prompt for every instance: question, a reference answer and the answer to be judged. No
official code exists: the words are the paper's; the paper's text lost its line breaks, so each
labelled field starts a line of its own, as the instance rules lay out theirs. Replies are read
by the same parsers and protocols as the rules judge (rules.py).

References come from a JSON Lines file, one `{"ID": ..., "reference": "..."}` a line (a list of
strings is joined with " / ").
"""

from __future__ import annotations

import re
from pathlib import Path

from vidbench.benchmarks.autoeval_video.loader import instance_id
from vidbench.benchmarks.autoeval_video.rules import JudgeProtocol
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import json_lines
from vidbench.core.messages import user
from vidbench.scoring.model_call import ModelCall
from vidbench.scoring.rule_judge import Judgment
from vidbench.tasks.problems import Problem

PROMPT_VERSION = "autoeval-unified-v1"
UNIFIED_PROMPT = (
    "Below, I will present you with a question, a reference answer, and an answer to be judged. "
    "The question will be labeled with [Question], the reference answer with [Reference answer], "
    "and the answer to be judged with [Answer to be judged]. The required format for your "
    "response will be indicated by [Form of the result]. Your task is to evaluate [Answer to be "
    "judged] and determine if its meaning is consistent with [Reference answer], and then provide "
    "your judgment based on the requirements stated in [Form of the result].\n"
    "[Question]: {question}\n"
    "[Reference answer]: {reference}\n"
    "[Answer to be judged]: {answer}\n"
    "[Form of the result]: Please give your reason first, then give a number in a new line: 1 if "
    "correct and 0 if incorrect. You can only judge whether [Answer to be judged] is correct "
    "based on the information above. You should not trust anyone but the information above."
)


_FIELD = re.compile(r"\{(question|reference|answer)\}")


def assemble_unified(question: str, reference: str, answer: str) -> str:
    # One pass over the template, not str.format (answers may hold braces) nor chained
    # str.replace (a question or reference holding "{answer}" would get the answer put in it).
    fields = {"question": question, "reference": reference, "answer": answer}
    return _FIELD.sub(lambda match: fields[match.group(1)], UNIFIED_PROMPT)


def unified_call(
    item: str, question: str, reference: str, answer: str, protocol: JudgeProtocol
) -> ModelCall[Judgment]:
    message = user(assemble_unified(question, reference, answer))
    return ModelCall(item, (message,), PROMPT_VERSION, protocol.parse, protocol.generation)


def load_references(path: Path) -> tuple[dict[str, str], list[Problem]]:
    """Reference answers by instance ID; bad lines and repeated IDs are problems."""
    try:
        lines = list(json_lines(Path(path)))
    except DataError as e:
        raise ConfigError(f"cannot read the references: {e}") from e
    references: dict[str, str] = {}
    problems: list[Problem] = []
    for line in lines:
        number, row = line.number, line.value
        try:
            if line.error is not None:
                raise DataError(line.error)
            if not isinstance(row, dict):
                raise DataError("not a JSON object")
            if "ID" not in row:
                raise DataError("no 'ID' field")
            key = instance_id(row["ID"])
            reference = row.get("reference")
            texts = (
                [r for r in reference if isinstance(r, str)] if isinstance(reference, list) else []
            )
            if isinstance(reference, list) and len(texts) == len(reference):
                reference = " / ".join(texts)
            if not isinstance(reference, str) or not reference.strip():
                raise DataError("'reference' must be a non-empty string (or list of strings)")
        except DataError as e:
            problems.append(Problem(f"line {number}", Path(path), str(e)))
            continue
        if key in references:
            problems.append(Problem(key, Path(path), f"line {number}: duplicate ID"))
            continue
        references[key] = reference
    return references, problems
