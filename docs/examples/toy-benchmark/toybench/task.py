"""The toy task: how a prompt is built from a sample and its frames, how a reply is scored,
and the table it reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from toybench.loader import load
from vidbench import (
    CallResult,
    Frame,
    FrameSpec,
    GenerationConfig,
    ImagePart,
    Loaded,
    Message,
    Sample,
    SampleScore,
    Table,
    Task,
    TaskRequest,
    TextPart,
    extract_choice,
    no_other_modifiers,
    outcome,
)

SPEC = FrameSpec(views=(0,), frames=2, sampler="linspace")  # 2 frames spread over the clip
LETTERS = "ABC"


class ToyQA(Task):
    version = "1"  # part of every key: change it when the prompt or the scoring changes
    protocol = "toy"
    table = Table(("Accuracy",))

    def __init__(self, name: str, frame_spec: FrameSpec) -> None:
        self.name = name
        self.frame_spec = frame_spec
        self.generation = GenerationConfig(temperature=0.0, max_tokens=8)

    def load(self, data: Path) -> Loaded[Sample]:
        return load(data)

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        options = " ".join(f"({LETTERS[i]}) {text}" for i, text in enumerate(sample.options))
        question = TextPart(f"{sample.question} {options}")
        parts: list[ImagePart | TextPart] = [*(frame.image for frame in frames), question]
        return (Message("user", tuple(parts)),)

    def choices(self, sample: Sample) -> tuple[str, ...]:
        return tuple(LETTERS[: len(sample.options)])

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        parsed = extract_choice(reply)  # the first option letter, or None
        return SampleScore(
            outcome=outcome.graded(parsed == sample.answer, unparsed=parsed is None),
            parsed=parsed,
            gold=sample.answer,
            unparsed=parsed is None,
            groups={"shape": str(sample.metadata["shape"])},  # the HTML report's filter
            details={"options": len(sample.options)},  # the benchmark's own fields
        )

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        """Each column's per-sample values: Accuracy averages 1 (right) and 0 (wrong)."""
        return {"Accuracy": [float(s.correct) for s in scores if s.correct is not None]}


def frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
    """`toy-qa:frames-N`: N frames; None for a modifier that is not about frames."""
    kind, _, count = modifier.partition("-")
    if kind == "frames" and count.isdigit() and int(count) >= 1:
        return spec.with_(frames=int(count))
    return None


def make_task(request: TaskRequest) -> Task:
    no_other_modifiers(request, ("frames-N",))  # a ConfigError naming the unknown variant
    return ToyQA(request.name, request.spec)
