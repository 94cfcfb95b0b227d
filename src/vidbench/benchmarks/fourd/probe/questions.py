"""The five questions of a probe object, each with the evidence it rests on.

Object Counting asks for the counted class ("How many red cubes ..."): the one question every
knob bears on, asked the same way for every object so accuracy can be compared across knob
values. The other four subtasks come from the procedural generators (synthetic/q_*.py), judged
with the object's first input camera; a draft whose evidence names a part that shares its label
("the red cube" when there are three) is drawn again, since the question would not say which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vidbench.benchmarks.fourd.loader import QARecord
from vidbench.benchmarks.fourd.probe.scenes import ProbeObject
from vidbench.benchmarks.fourd.synthetic.drafting import Draft, Generator, NoQuestion
from vidbench.benchmarks.fourd.synthetic.evidence import seen
from vidbench.benchmarks.fourd.synthetic.phrases import plural
from vidbench.benchmarks.fourd.synthetic.q_action import action_question
from vidbench.benchmarks.fourd.synthetic.q_appearance import appearance_question
from vidbench.benchmarks.fourd.synthetic.q_spatial import spatial_question
from vidbench.benchmarks.fourd.synthetic.q_temporal import temporal_question
from vidbench.benchmarks.fourd.synthetic.questions import SUBTASKS, layout
from vidbench.benchmarks.fourd.synthetic.scene import label

DRAWS = 12  # drafts tried per subtask before it has no question
COUNT_QUESTION = (
    "How many {colour} {shapes} are there in total? Count across all views, including any that "
    "are hidden behind other shapes in some views."
)


@dataclass(frozen=True)
class ProbeQuestion:
    """One question of the official layout and what must be seen to answer it."""

    key: str  # <uid>_<suffix>
    subtask: str  # its Category
    record: QARecord  # the 4d_qa.json entry
    draft: Draft


def counting_draft(obj: ProbeObject) -> Draft:
    colour, shape = obj.counted
    counted = [p for p, r in zip(obj.scene.parts, obj.roles, strict=True) if r == "counted"]
    question = COUNT_QUESTION.format(colour=colour, shapes=plural(shape))
    return Draft(
        question,
        number=len(counted),
        evidence=tuple(seen(p, "counted part") for p in counted),
    )


def _unambiguous(obj: ProbeObject, make: Generator, rng: np.random.Generator) -> Draft:
    labels = [label(p) for p in obj.scene.parts]
    for _ in range(DRAWS):
        draft = make(obj.scene, rng)
        if all(labels.count(label(e.part)) == 1 for e in draft.evidence):
            return draft
    raise NoQuestion("every draft names a part that shares its label")


GENERATORS: dict[str, Generator] = {
    "temporal_relationship": temporal_question,
    "motion": action_question,
    "spatial_relationship": spatial_question,
    "appearance": appearance_question,
}


def probe_questions(
    obj: ProbeObject, rng: np.random.Generator, positions: list[int]
) -> tuple[list[ProbeQuestion], dict[str, str]]:
    """The object's questions (gold answers at ``positions``, SUBTASKS order) and, per subtask
    it has none for, why."""
    questions: list[ProbeQuestion] = []
    missing: dict[str, str] = {}
    for (suffix, category), position in zip(SUBTASKS, positions, strict=True):
        try:
            if suffix == "object_counting":
                draft = counting_draft(obj)
            else:
                draft = _unambiguous(obj, GENERATORS[suffix], rng)
            options = layout(draft, position, rng)
        except (NoQuestion, ValueError) as e:
            missing[category] = str(e)
            continue
        record: QARecord = {
            "Question": draft.question,
            "Options": options,
            "Answer index": position,
            "Category": category,
        }
        questions.append(ProbeQuestion(f"{obj.scene.uid}_{suffix}", category, record, draft))
    return questions, missing
