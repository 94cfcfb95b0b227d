"""JSON Lines inputs of the AutoEval-Video workflows: predictions and human-labelled answers.

Predictions use the official submission format, one `{"ID": ..., "prediction": "..."}` a line.
Labels hold one judged answer a line: `{"ID": ..., "answer": "...", "human": 0 | 1}` with an
optional `"subset"` (e.g. the model that wrote the answer). Bad lines become problems naming the
file and line; they never stop a read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import JsonValue

from vidbench.benchmarks.autoeval_video.loader import instance_id
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import json_lines
from vidbench.tasks.problems import Problem

T = TypeVar("T")


def _rows(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed value or None, JSON error or None) for every non-blank line."""
    try:
        lines = list(json_lines(Path(path)))
    except DataError as e:
        raise ConfigError(str(e)) from e
    for line in lines:
        yield line.number, line.value, line.error


def _object_id(value: object) -> str:
    if not isinstance(value, dict):
        raise DataError("not a JSON object")
    if "ID" not in value:
        raise DataError("no 'ID' field")
    return instance_id(value["ID"])


def _problem(path: Path, number: int, message: str) -> Problem:
    return Problem(f"line {number}", Path(path), message)


def _checked(
    path: Path, check: Callable[[int, str, dict[str, JsonValue]], T], problems: list[Problem]
) -> Iterator[tuple[int, str, T]]:
    """(line number, ID, what `check` made of the line) for each JSON object with an ID that
    `check` accepts; any other line (check raised DataError) is added to `problems`."""
    for number, row, error in _rows(path):
        try:
            if error is not None:
                raise DataError(error)
            key = _object_id(row)
            value = check(number, key, row)
        except DataError as e:
            problems.append(_problem(path, number, str(e)))
            continue
        yield number, key, value


@dataclass
class Predictions:
    """Answers by instance ID ("" for an empty or null prediction) and the bad lines."""

    answers: dict[str, str]
    problems: list[Problem]


def _prediction(number: int, key: str, row: dict[str, JsonValue]) -> str:
    if "prediction" not in row:
        raise DataError(f"ID {key}: no 'prediction' field")
    text = row["prediction"]
    if text is not None and not isinstance(text, str):
        raise DataError(f"ID {key}: 'prediction' must be a string, got {text!r}")
    return text or ""


def read_predictions(path: Path) -> Predictions:
    answers: dict[str, str] = {}
    lines: dict[str, int] = {}
    problems: list[Problem] = []
    for number, key, text in _checked(path, _prediction, problems):
        if key in answers:  # the official script reads predictions into a dict: the last wins
            problems.append(
                _problem(
                    path,
                    number,
                    f"ID {key}: a second prediction (line {lines[key]}); this last one is used",
                )
            )
        answers[key] = text
        lines[key] = number
    return Predictions(answers, problems)


@dataclass(frozen=True)
class Label:
    """A human verdict on one answer. `item` is unique in the file: "<ID>@<line>"."""

    item: str
    id: str
    answer: str
    human: int
    subset: str | None


def _verdict(value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    if value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false"):
        return int(value.strip().lower() in ("1", "true"))
    raise DataError(f"'human' must be 0 or 1 (or true/false), got {value!r}")


def _label(number: int, key: str, row: dict[str, JsonValue]) -> Label:
    answer = row.get("answer")
    if not isinstance(answer, str):
        raise DataError(f"ID {key}: 'answer' must be a string")
    if "human" not in row:
        raise DataError(f"ID {key}: no 'human' verdict")
    subset = row.get("subset")
    shown = None if subset is None else str(subset)
    return Label(f"{key}@{number}", key, answer, _verdict(row["human"]), shown)


def read_labels(path: Path) -> tuple[list[Label], list[Problem]]:
    problems: list[Problem] = []
    labels = [label for _, _, label in _checked(path, _label, problems)]
    return labels, problems
