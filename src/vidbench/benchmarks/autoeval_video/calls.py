"""What the AutoEval-Video workflows ask a judge, and asking it through the judge runner."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from vidbench.benchmarks.autoeval_video.rules import JudgeProtocol, rules_call
from vidbench.benchmarks.autoeval_video.unified import load_references, unified_call
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.records import Sample
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.judging import describe_verdicts, judge_all
from vidbench.runner.store import Store
from vidbench.scoring.judge import JudgeCall, Verdict
from vidbench.tasks.problems import Problem

JudgePromptKind = Literal["rules", "unified"]
PROMPT_KINDS = ("rules", "unified")


@dataclass
class JudgePrompt:
    """Builds judge calls: the instance's rule (`rules`) or the unified prompt with a reference
    answer (`unified`, papers/004 section 7.2)."""

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

    def call(self, item: str, sample: Sample, answer: str) -> JudgeCall:
        """The call for one answer; DataError when the instance lacks what the prompt needs."""
        if self.kind == "rules":
            return rules_call(item, sample.rules or "", answer, self.protocol)
        reference = self.references.get(sample.id)
        if reference is None:
            raise DataError(f"ID {sample.id}: no reference answer in the references file")
        return unified_call(item, sample.question or "", reference, answer, self.protocol)


@dataclass(frozen=True)
class JudgeModel:
    """A judge named by a model spec, with its backend options and call settings."""

    spec: str
    options: dict[str, str] = field(default_factory=dict)
    concurrency: int = 16
    seed: int = 0


def ask_judge(
    judge: JudgeModel,
    calls: Sequence[JudgeCall],
    store: Store,
    attempts: int,
    show_progress: bool = False,
    console: Console | None = None,
) -> tuple[dict[str, Verdict], dict[str, Any]]:
    """Verdicts by item (stored answers reused, nothing asked twice) and the judge's identity;
    what was asked and what came from the store is printed to `console`."""
    options = ModelOptions(judge.seed, judge.concurrency, dict(judge.options), "--judge-opt")
    model = load_model(judge.spec, options)

    async def go() -> dict[str, Verdict]:
        if not calls:
            return {}
        await model.start()
        try:
            return await judge_all(
                model,
                calls,
                store,
                max_attempts=attempts,
                concurrency=judge.concurrency,
                show_progress=show_progress,
            )
        finally:
            await model.aclose()

    verdicts = asyncio.run(go())
    if console is not None and verdicts:
        console.print(describe_verdicts(verdicts.values()), highlight=False)
    return verdicts, model.identity()
