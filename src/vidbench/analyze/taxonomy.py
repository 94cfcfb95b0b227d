"""The seven error types of MMWorld's error analysis (MMWorld paper, section 4.3 "Error
Analysis", Figure 5, and appendix E). The first six definitions are appendix E's words; Reject
to Answer, which appendix E describes by one example, is summarised from that example. They say
why a multiple-choice answer is wrong, so they apply to any multiple-choice task.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorType:
    code: str  # Figure 5's abbreviation
    name: str
    definition: str  # appendix E's words


ERROR_TYPES: tuple[ErrorType, ...] = (
    ErrorType(
        "QUE",
        "Question Understanding Error",
        "Models misinterpret the question's intent, such as misunderstanding how a pendulum's "
        "period would change if a condition in the scenario is altered.",
    ),
    ErrorType(
        "AUE",
        "Audio Understanding Error",
        "Models fail to interpret audio cues correctly, shown by their failure to recognize blue "
        "and red lines on a stock chart.",
    ),
    ErrorType(
        "VPE",
        "Visual Perception Error",
        "There is a misinterpretation of visual content, leading to incorrect assumptions about "
        "the visual data presented in the video.",
    ),
    ErrorType(
        "HE",
        "Hallucination Error",
        "Models generate content or details that are not present in the actual data, "
        "essentially 'hallucinating' information.",
    ),
    ErrorType(
        "RE",
        "Reasoning Error",
        "Models demonstrate a lack of logical reasoning, leading to incorrect conclusions based "
        "on the given data.",
    ),
    ErrorType(
        "LDK",
        "Lack of Domain Knowledge",
        "Models show an inability to answer questions that require specific domain expertise, "
        "indicating a gap in their knowledge.",
    ),
    ErrorType(
        "RA",
        "Reject to Answer",
        "Instead of choosing an option, the model gives an unrelated response or declines, "
        "either from a misunderstanding or from caution (a question that may be read as "
        "touching a sensitive topic can trigger safety and compliance filters).",
    ),
)
CODES = tuple(t.code for t in ERROR_TYPES)
BY_CODE = {t.code: t for t in ERROR_TYPES}


def _key(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


# Codes, full names and the paper's other spellings ("Hallucinations", "PE") -> code.
_ALIASES = (
    {_key(t.code): t.code for t in ERROR_TYPES}
    | {_key(t.name): t.code for t in ERROR_TYPES}
    | {"hallucinations": "HE", "hallucination": "HE", "pe": "VPE", "rejection": "RA"}
)


def error_code(text: str) -> str | None:
    """The error type a judge named (code or name, any case), or None."""
    return _ALIASES.get(_key(text))


def definitions_text() -> str:
    """One line per type, "CODE (Name): definition", for the judge prompt."""
    return "\n".join(f"{t.code} ({t.name}): {t.definition}" for t in ERROR_TYPES)
