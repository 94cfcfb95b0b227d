"""`predictions:FILE.jsonl`: answers made elsewhere (another harness, a human baseline, an
annotation app), fed to the same judge, score and report stages as a model's.

One JSON object a line: `{"id": "<sample id>", "answer": "<the answer>"}`. The id may also be
called `ID` or `uid` (AutoEval-Video's submissions, 4D-Bench's captions), the answer
`prediction` or `caption`. A sample with no line gets an error naming the file (never an empty
answer); unreadable lines are named with their line number in that error; a repeated id keeps
its last line, as a dict does (a file a resumed job appended to), and a warning names the ids
whose lines give different answers. No frame is decoded for this model (`needs_frames`).

The identity is the file's name (or `--model-opt name=LABEL`, the row's name in tables) and the
digest of its bytes, so editing the file asks again (new store keys) and moving it does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue
from rich.markup import escape

from vidbench.console import counted, err
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import Json, json_lines
from vidbench.core.requests import Request, Response
from vidbench.media.cache import file_digest
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, reject_extra

ID_FIELDS = ("id", "ID", "uid")
ANSWER_FIELDS = ("answer", "prediction", "caption")


@dataclass
class PredictionLines:
    answers: dict[str, str] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)  # "line 3: malformed JSON (...)"
    line_of: dict[str, int] = field(default_factory=dict)  # the line each answer is from
    # an id whose lines give different answers: (id, the earlier line, the later one)
    conflicting: list[tuple[str, int, int]] = field(default_factory=list)


def _first(record: dict[str, JsonValue], names: tuple[str, ...]) -> Any:
    return next((record[name] for name in names if name in record), None)


def read_prediction_lines(path: Path) -> PredictionLines:
    try:
        lines = list(json_lines(path))
    except DataError as e:
        raise ConfigError(f"predictions file {e}") from e
    read = PredictionLines()
    for line in lines:
        number, record = line.number, line.value
        if line.error is not None:
            read.bad_lines.append(f"line {number}: {line.error}")
            continue
        if not isinstance(record, dict):
            read.bad_lines.append(f"line {number}: not a JSON object")
            continue
        key, answer = _first(record, ID_FIELDS), _first(record, ANSWER_FIELDS)
        if key is None or answer is None or not isinstance(answer, str):
            wanted = f"an id ({'/'.join(ID_FIELDS)}) and a text ({'/'.join(ANSWER_FIELDS)})"
            read.bad_lines.append(f"line {number}: needs {wanted}")
            continue
        key = str(key)
        if key in read.answers and read.answers[key] != answer:
            read.conflicting.append((key, read.line_of[key], number))
        read.answers[key] = answer
        read.line_of[key] = number
    return read


def conflict_warning(path: Path, conflicting: Sequence[tuple[str, int, int]]) -> str:
    """What to say of ids whose lines give different answers (the last line is used)."""
    shown = ", ".join(f"{key} (lines {a} and {b})" for key, a, b in conflicting[:3])
    more = f" and {len(conflicting) - 3} more" if len(conflicting) > 3 else ""
    ids = counted(len({key for key, _, _ in conflicting}), "id")
    return (
        f"predictions file {path}: {ids} given again with another answer: {shown}{more}; "
        "the last line of each is used"
    )


class PredictionsFile(Model):
    needs_frames = False

    def __init__(self, path: Path, name: str | None = None) -> None:
        if not path.is_file():
            raise ConfigError(f"predictions file {path}: not found")
        self.path = path
        self.spec = f"predictions:{name or path.name}"
        self.lines = read_prediction_lines(path)
        self.digest = file_digest(path)
        if self.lines.conflicting:
            warning = conflict_warning(path, self.lines.conflicting)
            err.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False, soft_wrap=True)

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec, "digest": self.digest}

    def _missing(self, sample_id: str) -> str:
        text = f"no prediction for id {sample_id} in {self.path}"
        if self.lines.bad_lines:
            shown = "; ".join(self.lines.bad_lines[:3])
            more = len(self.lines.bad_lines) - 3
            text += f" (unreadable: {shown}{f'; and {more} more' if more > 0 else ''})"
        return text

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [
            Response(r.key, self.lines.answers[r.sample_id])
            if r.sample_id in self.lines.answers
            else Response(r.key, None, error=self._missing(r.sample_id), status="no-prediction")
            for r in requests
        ]


def build(arg: str, options: ModelOptions) -> Model:
    reject_extra("predictions", options, ("name",))
    if not arg:
        raise ConfigError("model 'predictions' needs a file: predictions:FILE.jsonl")
    return PredictionsFile(Path(arg), options.extra.get("name"))
