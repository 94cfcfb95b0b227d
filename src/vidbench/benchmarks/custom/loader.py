"""A declared benchmark's rows as Samples: each row's question, options and gold letter (or its
accepted answers and judging rule), its videos and window; every bad row a Problem naming the row,
its file and what is wrong, the rest loads.

A Sample's metadata is its row's fields (JSON values), so the prompt template, the group columns
and an exported copy of the benchmark (tasks/exported.py) all read the same thing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import fields
from vidbench.benchmarks.custom.rows import DeclaredRow, read_rows
from vidbench.benchmarks.custom.spec import Spec
from vidbench.core.errors import DataError
from vidbench.core.records import MediaRef, Sample
from vidbench.scoring.choices import option_letters
from vidbench.tasks.problems import Loaded, Problem

BENCHMARK = "custom"


def options_block(spec: Spec, options: tuple[str, ...]) -> str:
    """The options as the prompt shows them, one `option_format` line each."""
    letters = option_letters(len(options))
    return "\n".join(
        spec.option_format.format(letter=letter, text=text, index=i)
        for i, (letter, text) in enumerate(zip(letters, options, strict=True))
    )


def prompt_text(spec: Spec, sample: Sample) -> str:
    """The prompt template filled from the row's fields, `{question}`, `{options}` (the options
    block) and `{letters}` ("A, B, C, D")."""
    computed = {"question": sample.question or ""}
    if sample.options:
        computed["options"] = options_block(spec, sample.options)
        computed["letters"] = ", ".join(option_letters(len(sample.options)))
    return fields.render(spec.prompt, {**sample.metadata, **computed}, "the prompt template")


def _open_ended(spec: Spec, row: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """(accepted answers, judging rule) of an open-ended row."""
    references = fields.references_of(row.get(spec.answer)) if spec.answer else ()
    rubric = row.get(spec.rubric) if spec.rubric else None
    if rubric is not None and (not isinstance(rubric, str) or not rubric.strip()):
        rubric = None
    if spec.scoring == "judge":
        if not references and rubric is None:
            raise DataError("neither an answer nor a rubric for the judge")
        return references, rubric
    if not references:
        raise DataError(f"no answer to compare with (field {spec.answer!r})")
    if spec.scoring == "regex":
        for pattern in references:
            try:
                re.compile(pattern)
            except re.error as e:
                raise DataError(f"answer {pattern!r} is not a regular expression ({e})") from None
    return references, None


def sample_of(row: DeclaredRow, spec: Spec, data: Path) -> Sample:
    """One row as a Sample; DataError saying what is wrong with it."""
    values = row.fields
    question = values.get(spec.question)
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"no question: the field {spec.question!r} is missing or empty")
    start, end = fields.seconds(values, spec.start), fields.seconds(values, spec.end)
    if start is not None and end is not None and end <= start:
        raise DataError(f"the window ends ({end} s) before it starts ({start} s)")
    media = MediaRef(fields.videos_of(values, row.source, data, spec.views), start, end)
    fields.group_values(values, spec.groups)
    if spec.multiple_choice:
        assert spec.answer is not None  # spec.py refuses a multiple-choice spec without one
        options = fields.options_of(values, spec.options)
        answer = fields.answer_letter(
            values.get(spec.answer), options, spec.index_base, spec.answer_format
        )
        sample = Sample(row.id, BENCHMARK, "mcq", media, question.strip(), options, answer)
    else:
        references, rubric = _open_ended(spec, values)
        sample = Sample(
            row.id, BENCHMARK, "open", media, question.strip(), references=references, rules=rubric
        )
    sample = dataclasses.replace(sample, metadata=dict(values))
    prompt_text(spec, sample)  # a field the template needs and the row lacks: a problem now
    return sample


def load(spec: Spec, data: Path) -> Loaded[Sample]:
    """Every good row of the benchmark's rows files under `data` as a Sample; every bad one (and
    every unreadable file) a Problem."""
    read = read_rows(spec, data)
    samples, problems = [], list(read.problems)
    for row in read.items:
        try:
            samples.append(sample_of(row, spec, data))
        except DataError as e:
            problems.append(Problem(row.id, row.file, f"{row.where}: {e}"))
    return Loaded(samples, problems)
