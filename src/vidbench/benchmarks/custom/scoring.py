"""How a declared benchmark scores a reply.

Multiple choice, by the named parser (the reply's option letter, or None: unparsed):
- `extract` (default): 4D-Bench's official output processor over the question's letters: the
  first "(X)", else the first capital letter standing alone (scoring/choices.py);
- `letter`: the reply must be the letter alone ("B", "(B)", "b.");
- `videomme`: Video-MME's official `extract_characters_regex`;
- `option-text`: the letter, or the text of exactly one option (scoring/option_text.py).

Open-ended, against the row's accepted answers (`answer`: one text or a list):
- `exact`: the reply equals one of them, ignoring case, punctuation and spacing;
- `contains`: the reply holds one of them as whole words (same normalisation);
- `regex`: one of them, a regular expression, matches somewhere in the reply (re.search);
- `judge`: an LLM judge in AutoEval-Video's rule style: a row's rubric holding
  `[Answer to be judged]:` is a complete judge prompt, filled as AutoEval-Video's script does;
  otherwise prompts/judge.v2.txt (or the benchmark's `judge_prompt` file) carries the question,
  the reference answer and the rubric; the reply's last line is 1 or 0
  (scoring/rule_judge.parse_robust). The built-in prompt fences the answer under test between
  two lines named by a hash of the answer (`answer_fence`), so an answer cannot close the fence
  and write rules or a verdict of its own after it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from string import Template

from vidbench.benchmarks.custom.spec import Spec
from vidbench.core.errors import ConfigError
from vidbench.core.messages import user
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.choices import extract_choice, option_letters, strict_letter, videomme_choice
from vidbench.scoring.model_call import ModelCall
from vidbench.scoring.option_text import letter_or_text, normalize
from vidbench.scoring.prompt_files import load_prompt
from vidbench.scoring.rule_judge import ANSWER_MARKER, Judgment, assemble_prompt, parse_robust

JUDGE_GENERATION = GenerationConfig(temperature=0.0, max_tokens=1024)
NO_RUBRIC = "The answer is correct when it agrees with the reference answer."
NO_REFERENCE = "(none given; judge by the rules)"


def parse_choice(reply: str | None, sample: Sample, parser: str) -> str | None:
    """The option letter the reply chose under `parser`, or None."""
    letters = option_letters(len(sample.options))
    if reply is None:
        return None
    if parser == "extract":
        return extract_choice(reply, letters=letters)
    if parser == "letter":
        return strict_letter(reply, letters)
    if parser == "videomme":
        return videomme_choice(reply, letters)
    if parser == "option-text":
        return letter_or_text(reply, dict(zip(letters, sample.options, strict=True)))
    raise ConfigError(f"unknown parser {parser!r}")


def _holds_words(said: str, wanted: str) -> bool:
    return bool(wanted) and f" {wanted} " in f" {said} "


def matches(reply: str, accepted: Sequence[str], scoring: str) -> bool:
    """Whether an open-ended reply is right under `exact`, `contains` or `regex`."""
    if scoring == "regex":
        return any(re.search(pattern, reply) for pattern in accepted)
    said = normalize(reply)
    if scoring == "exact":
        return any(said == normalize(answer) for answer in accepted)
    if scoring == "contains":
        return any(_holds_words(said, normalize(answer)) for answer in accepted)
    raise ConfigError(f"unknown scoring {scoring!r}")


def _own_template_version(spec: Spec, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"custom/{spec.name}-judge-prompt-{digest}"


def judge_prompt(spec: Spec, sample: Sample, reply: str) -> tuple[str, str]:
    """(prompt text, prompt version) of the judge call for one reply."""
    if sample.rules and ANSWER_MARKER in sample.rules:  # an AutoEval-Video style rule
        return assemble_prompt(sample.rules, reply), "custom/autoeval-rule"
    fields = {
        "question": sample.question or "",
        "reference": " | ".join(sample.references) or NO_REFERENCE,
        "rubric": sample.rules or NO_RUBRIC,
        "answer": reply,
    }
    if spec.judge_prompt is not None:
        try:
            text = Template(spec.judge_prompt).substitute(fields)
        except (KeyError, ValueError) as e:
            raise ConfigError(
                f"{spec.file}: judge_prompt: not a template over $question, $reference, $rubric "
                f"and $answer ({e!r})"
            ) from None
        return text, _own_template_version(spec, spec.judge_prompt)
    prompt = load_prompt("vidbench.benchmarks.custom", "judge.v2.txt", "custom")
    return prompt.render(**fields, fence=answer_fence(reply)), prompt.version


def answer_fence(reply: str) -> str:
    """The name of the lines that fence a reply in the judge prompt: from a hash of the reply, so
    the same reply gets the same prompt (and its stored verdict) and no reply can hold the line
    that closes its own fence."""
    return hashlib.sha256(reply.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def judge_call(spec: Spec, sample: Sample, reply: str) -> ModelCall[Judgment]:
    text, version = judge_prompt(spec, sample, reply)
    return ModelCall(judge_item(sample), (user(text),), version, parse_robust, JUDGE_GENERATION)


def judge_item(sample: Sample) -> str:
    return f"{sample.id}:judge"
