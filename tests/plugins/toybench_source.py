"""A complete benchmark in one module, as a third party would write it: the `Benchmark` value,
its task, loader and validator, and one command of its own. The test copies this file into a
temporary package and registers it with one entry point line: nothing in vidbench changes."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vidbench.annotate import db
from vidbench.annotate.adapters import Importer, ReviewAdapter
from vidbench.annotate.items import Imported, add
from vidbench.benchmark import Benchmark, CommandGroups
from vidbench.core.messages import Message, TextPart
from vidbench.core.records import MediaRef, Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.choices import extract_choice
from vidbench.scoring.model_call import CallResult
from vidbench.scoring.outcome import SampleScore, graded
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.registry import TaskEntry, TaskRequest, no_other_modifiers
from vidbench.tasks.table import Table

QUESTIONS = "toy_questions.json"
SPEC = FrameSpec(views=(0,), frames=2, sampler="linspace")


def load(data: Path) -> Loaded[Sample]:
    items, problems = [], []
    for row in json.loads((data / QUESTIONS).read_text()):
        video = data / row["video"]
        if not video.is_file():
            problems.append(Problem(row["id"], video, "missing video"))
            continue
        items.append(
            Sample(
                row["id"],
                "toy",
                "mcq",
                MediaRef.single(video),
                row["question"],
                tuple(row["options"]),
                row["answer"],
                metadata={"shape": row["shape"]},
            )
        )
    return Loaded(items, problems)


class ToyQA(Task):
    version = "1"
    protocol = "toy"
    table = Table(("Accuracy",))

    def __init__(self, name: str, frame_spec: FrameSpec) -> None:
        self.name = name
        self.frame_spec = frame_spec
        self.generation = GenerationConfig(temperature=0.0, max_tokens=8)

    def load(self, data: Path) -> Loaded[Sample]:
        return load(data)

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        options = " ".join(
            f"({letter}) {text}" for letter, text in zip("ABCD", sample.options, strict=False)
        )
        parts = [*(f.image for f in frames), TextPart(f"{sample.question} {options}")]
        return (Message("user", tuple(parts)),)

    def choices(self, sample: Sample) -> tuple[str, ...]:
        return tuple("ABCD"[: len(sample.options)])

    def score(self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult]) -> SampleScore:
        parsed = extract_choice(reply)
        return SampleScore(
            outcome=graded(parsed == sample.answer, unparsed=parsed is None),
            parsed=parsed,
            gold=sample.answer,
            unparsed=parsed is None,
            groups={"shape": sample.metadata["shape"]},
            details={"letters": len(sample.options)},
        )

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return {"Accuracy": [float(s.correct) for s in scores if s.correct is not None]}


def _make(request: TaskRequest) -> Task:
    no_other_modifiers(request, ())
    return ToyQA(request.name, request.spec)


def _validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    return load(root).problems


def _commands(groups: CommandGroups) -> None:
    p = groups.top.add_parser("toy-count", help="count the toy questions in a folder")
    p.add_argument("data", help="a toy data folder")

    def handler(args: argparse.Namespace) -> int:
        print(f"{len(load(Path(args.data)).items)} toy questions")
        return 0

    p.set_defaults(func=handler)


def _import(conn: Any, data: Path, source: Path, author: str) -> Imported:
    """The toy questions, to answer in the review app (a human baseline)."""
    out = Imported()
    loaded = load(data)
    out.problems += [str(p) for p in loaded.problems]
    with db.transaction(conn):
        for sample in loaded.items:
            record = {
                "benchmark": "toy",
                "id": sample.id,
                "Question": sample.question,
                "Options": [f"({'ABC'[i]}) {option}" for i, option in enumerate(sample.options)],
                "gold": sample.answer,
                "video": str(sample.media.videos[0].relative_to(data)),
            }
            add(conn, "answer", f"toy/{sample.id}", record, QUESTIONS, out)
    return out


def _finds(data: Path) -> list[Path]:
    return [data] if (data / QUESTIONS).is_file() else []


REVIEW = ReviewAdapter("toy", importers=(Importer("toy", _import, _finds),))

BENCHMARK = Benchmark(
    name="toy",
    title="Toy",
    tasks={"toy-qa": TaskEntry(_make, SPEC, lambda spec, modifier: None, ())},
    validate=_validate,
    commands=_commands,
    sample_groups=("shape",),
    review=REVIEW,
)
