"""What the AutoEval-Video workflows ask a judge (asking it goes through runner/model_calls.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from vidbench.benchmarks.autoeval_video.rules import JudgeProtocol, rules_call
from vidbench.benchmarks.autoeval_video.unified import load_references, unified_call
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.records import Sample
from vidbench.scoring.model_call import ModelCall
from vidbench.scoring.rule_judge import Judgment
from vidbench.tasks.problems import Problem

JudgePromptKind = Literal["rules", "unified"]
PROMPT_KINDS = ("rules", "unified")


@dataclass
class JudgePrompt:
    """Builds judge calls: the instance's rule (`rules`) or the unified prompt with a reference
    answer (`unified`, AutoEval-Video paper section 7.2)."""

    kind: JudgePromptKind
    protocol: JudgeProtocol
    references: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def make(
        cls, kind: str, protocol: JudgeProtocol, references: Path | None = None
    ) -> JudgePrompt:
        if kind not in PROMPT_KINDS:
            raise ConfigError(f"unknown judge prompt {kind!r} ({', '.join(PROMPT_KINDS)})")
        if kind == "unified":
            if references is None:
                raise ConfigError("the unified-prompt judge needs --references FILE.jsonl")
            found, problems = load_references(references)
            return cls("unified", protocol, found, problems)
        if references is not None:
            raise ConfigError("--references is for --judge-prompt unified only")
        return cls("rules", protocol)

    def call(self, item: str, sample: Sample, answer: str) -> ModelCall[Judgment]:
        """The call for one answer; DataError when the instance lacks what the prompt needs."""
        if self.kind == "rules":
            return rules_call(item, sample.rules or "", answer, self.protocol)
        reference = self.references.get(sample.id)
        if reference is None:
            raise DataError(f"ID {sample.id}: no reference answer in the references file")
        return unified_call(item, sample.question or "", reference, answer, self.protocol)
