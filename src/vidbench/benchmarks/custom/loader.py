"""A declared benchmark's rows as Samples: each row's question, options and gold letter (or its
accepted answers and judging rule), its videos and window; every bad row a Problem naming the row,
its file and what is wrong, the rest loads.

A Sample's metadata is its row's fields (JSON values), so the prompt template, the group columns
and an exported copy of the benchmark (tasks/exported.py) all read the same thing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import fields, gold, paths
from vidbench.benchmarks.custom.rows import DeclaredRow, iter_rows
from vidbench.benchmarks.custom.spec import Spec
from vidbench.core.errors import DataError
from vidbench.core.records import MediaRef, Sample
from vidbench.scoring.choices import option_letters
from vidbench.tasks.problems import Loaded, Problem

BENCHMARK = "custom"


def options_block(spec: Spec, options: tuple[str, ...]) -> str:
    """The options as the prompt shows them, one `option_format` line each."""
    letters = option_letters(len(options))
    try:
        return "\n".join(
            spec.option_format.format(letter=letter, text=text, index=i)
            for i, (letter, text) in enumerate(zip(letters, options, strict=True))
        )
    except (ValueError, TypeError) as e:  # a format spec the values do not take ({text:d})
        raise DataError(f"option_format {spec.option_format!r} cannot show an option ({e})") from e


def prompt_text(spec: Spec, sample: Sample) -> str:
    """The prompt template filled from the row's fields, `{question}`, `{options}` (the options
    block) and `{letters}` ("A, B, C, D")."""
    computed = {"question": sample.question or ""}
    if sample.options:
        computed["options"] = options_block(spec, sample.options)
        computed["letters"] = ", ".join(option_letters(len(sample.options)))
    return paths.render(spec.prompt, {**sample.metadata, **computed}, "the prompt template")


def _open_ended(spec: Spec, row: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """(accepted answers, judging rule) of an open-ended row; none of either: no gold."""
    references = fields.references_of(fields.value_of(row, spec.answer)) if spec.answer else ()
    rubric = fields.value_of(row, spec.rubric) if spec.rubric else None
    if rubric is not None and (not isinstance(rubric, str) or not rubric.strip()):
        rubric = None
    if spec.scoring == "regex":
        for pattern in references:
            try:
                re.compile(pattern)
            except re.error as e:
                raise DataError(f"answer {pattern!r} is not a regular expression ({e})") from None
    return references, rubric if spec.scoring == "judge" else None


def sample_of(row: DeclaredRow, spec: Spec, videos: fields.VideoFiles) -> Sample:
    """One row as a Sample (its videos found under `videos.data`); DataError saying what is
    wrong with it. A row without a gold answer is a Sample too (answer None, no references): it
    is asked, and scored as `no-gold`."""
    values = row.fields
    question = fields.value_of(values, spec.question)
    if not isinstance(question, str) or not question.strip():
        part = paths.missing_part(values, spec.question)
        hint = paths.where_it_is(values, spec.question) if question is None else ""
        raise DataError(f"no question: {part} is missing or empty{hint}")
    start, end = fields.window_of(values, spec)
    media = MediaRef(fields.videos_of(values, row.source, videos, spec.views), start, end)
    fields.group_values(values, spec.groups)
    if spec.multiple_choice:
        assert spec.answer is not None  # spec.py refuses a multiple-choice spec without one
        choices = gold.choices_of(values, spec.options, spec.empty_options)
        answer = gold.gold_letter(values, choices, spec.answer, spec.index_base, spec.answer_format)
        sample = Sample(row.id, BENCHMARK, "mcq", media, question.strip(), choices.texts, answer)
    else:
        references, rubric = _open_ended(spec, values)
        sample = Sample(
            row.id, BENCHMARK, "open", media, question.strip(), references=references, rules=rubric
        )
    sample = dataclasses.replace(sample, metadata=dict(values))
    prompt_text(spec, sample)  # a field the template needs and the row lacks: a problem now
    return sample


def has_gold(sample: Sample) -> bool:
    """Whether the sample can be scored: a gold letter, an accepted answer or a judging rule."""
    return sample.answer is not None or bool(sample.references) or sample.rules is not None


def iter_load(spec: Spec, data: Path) -> Iterator[Sample | Problem]:
    """Every good row of the benchmark's rows files under `data` as a Sample, every bad one (and
    every unreadable file) a Problem, one at a time as the rows are read (rows.iter_rows: in
    file order, then the problems of the answers and decisions files)."""
    videos = fields.VideoFiles(data)
    for row in iter_rows(spec, data):
        if isinstance(row, Problem):
            yield row
            continue
        try:
            yield sample_of(row, spec, videos)
        except DataError as e:
            yield Problem(row.id, row.file, f"{row.where}: {e}")


def load(spec: Spec, data: Path) -> Loaded[Sample]:
    """`iter_load`'s samples and problems, all at once."""
    return Loaded.gathered(iter_load(spec, data))
