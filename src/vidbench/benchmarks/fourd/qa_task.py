"""4D-Bench object question answering (paper section 4.2, supplement section D.2)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.benchmarks.fourd.options import LETTERS
from vidbench.benchmarks.fourd.prompt import TIMESTAMPS_SENTENCE, frames_sentence, image_parts
from vidbench.core.messages import Message, TextPart
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.choices import extract_choice
from vidbench.scoring.model_call import CallResult
from vidbench.scoring.outcome import SampleScore, graded
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.table import Table

# 4D-Bench supplement Fig. VI, with the image counts filled from the FrameSpec.
QA_PROMPT = (
    "You are an excellent video analyst. {frames} and a question and four choices. Carefully "
    "watch the provided videos and pay attention to every detail. Based on your observations, "
    "select the best option that accurately addresses the question.{timestamps} Here is the "
    "question and choices: {qa}. You must return only the option identifier (e.g., '(A)') "
    "without any additional text, do not add any additional analysis, just return the correct "
    "option identifier."
)

OVERALL = "Overall"
# the group field of a question (its column): Action, Counting, ...
SUBTASK = "subtask"


class FourDQA(Task):
    """Images first (in FrameSpec order), then the official prompt with the QA object pasted in
    as Python `str(dict)`. Replies are parsed by the paper's output processor; an unparsed reply
    is wrong and also counted on its own."""

    version = "1"
    protocol = "official"
    table = Table((*fourd_bench.SUBTASKS, OVERALL))

    def __init__(self, name: str, frame_spec: FrameSpec, generation: GenerationConfig) -> None:
        self.name = name
        self.frame_spec = frame_spec
        self.generation = generation

    def load(self, data: Path) -> Loaded[Sample]:
        return fourd_bench.load_qa(data)

    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        return fourd_bench.iter_qa(data)

    def prompt_text(self, sample: Sample) -> str:
        return QA_PROMPT.format(
            frames=frames_sentence(self.frame_spec),
            timestamps=TIMESTAMPS_SENTENCE if self.frame_spec.timestamps else "",
            qa=sample.metadata["official_qa_text"],
        )

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        parts = [*image_parts(frames, self.frame_spec), TextPart(self.prompt_text(sample))]
        return (Message("user", tuple(parts)),)

    def choices(self, sample: Sample) -> tuple[str, ...]:
        return LETTERS

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        parsed = extract_choice(reply, protocol=self.protocol)
        probe = sample.metadata.get("probe")  # the probe's knob fields (loader.PROBE_FILE)
        return SampleScore(
            outcome=graded(parsed == sample.answer, unparsed=parsed is None),
            parsed=parsed,
            gold=sample.answer,
            unparsed=parsed is None,
            groups={SUBTASK: sample.metadata[SUBTASK]},
            details={"probe": probe} if probe is not None else {},
        )

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        values: dict[str, list[float]] = {c: [] for c in self.table.columns}
        for score in scores:
            if score.correct is None:
                continue
            values[str(score.groups[SUBTASK])].append(float(score.correct))  # one per question
            values[OVERALL].append(float(score.correct))
        return values
