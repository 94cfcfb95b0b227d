"""MMWorld's LLM judge: the official prompt and the yes/no verdict.

The prompt is the official script's `compute_question_accuracy_with_gpt`, character for
character: the system message, the question, the options as "Option A: ..." lines (no newline
before "(please select one)"), the gold label and the model's answer.

Verdicts:
- `official`: the script's rule, "yes" anywhere in the lowercased reply (so "Yes.", "yes, it is"
  and also "eyes" are yes; anything else, rambling included, is no). Never unreadable.
- `yes-no` (vidbench's default): the yes or no the reply opens or closes with ("Yes.", "No, the
  model chose b.", "... So yes."); a reply giving neither there (a yes/no only inside its
  reasoning, perhaps quoted from the answer under test), or opening with one and closing with the
  other, is unreadable, and the judge runner asks again (up to its attempt limit, then the
  verdict is `unparsed`).
An empty reply is a failed call for every parser (the backend records it as `empty`), never a
"no": the sample is reported as a judge error and the next judge stage asks again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from vidbench.core.errors import ConfigError
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.model_call import ModelCall

PROMPT_VERSION = "mmworld-judge-official-v1"
SYSTEM = "You are a helpful assistant that provides concise answers."
VERDICT_PARSERS = ("official", "yes-no")
# The official script used the API's default settings; vidbench pins greedy decoding.
JUDGE_GENERATION = GenerationConfig(temperature=0.0, max_tokens=256)


def judge_prompt(question: str, options: Mapping[str, str], gold_label: str, answer: str) -> str:
    options_str = "\n".join(f"Option {label.upper()}: {text}" for label, text in options.items())
    return (
        "For question: "
        + question
        + "\n"
        + options_str
        + "(please select one)\nGround truth answer: "
        + gold_label
        + "\nModel predicted answer: "
        + answer
        + "\nBased on the question and the ground truth answer, is the model's predicted answer "
        "correct? If multi-choice provided, think about which choice is selected by the model, "
        "is it correct? (please answer yes/no)\n"
    )


def official_verdict(reply: str) -> bool:
    return "yes" in reply.strip().lower()


def yes_no_verdict(reply: str) -> bool | None:
    """The verdict a reply opens or closes with; None when it gives none there, or opens with
    one and closes with the other. A yes or no inside the reasoning is not read: it may be the
    judge quoting the answer under test (which can say "yes" to the judge)."""
    words = re.findall(r"[a-z]+", reply.lower())
    said = {w for w in words[:1] + words[-1:] if w in ("yes", "no")}
    return said.pop() == "yes" if len(said) == 1 else None


def verdict_parser(name: str) -> Callable[[str], bool | None]:
    if name == "official":
        return official_verdict
    if name == "yes-no":
        return yes_no_verdict
    raise ConfigError(f"unknown MMWorld verdict parser {name!r} ({', '.join(VERDICT_PARSERS)})")


def judge_call(
    item: str,
    question: str,
    options: Mapping[str, str],
    gold_label: str,
    answer: str,
    parser: str,
) -> ModelCall[bool]:
    prompt = judge_prompt(question, options, gold_label, answer)
    messages = (
        Message("system", (TextPart(SYSTEM),)),
        Message("user", (TextPart(prompt),)),
    )
    return ModelCall(item, messages, PROMPT_VERSION, verdict_parser(parser), JUDGE_GENERATION)
