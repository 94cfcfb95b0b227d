"""`predictions:FILE.jsonl`: answers made elsewhere (another harness, a human baseline, an
annotation app), fed to the same judge, score and report stages as a model's.

One JSON object a line: `{"id": "<sample id>", "answer": "<the answer>"}`. The id may also be
called `ID` or `uid` (AutoEval-Video's submissions, 4D-Bench's captions), the answer
`prediction` or `caption`. A sample with no line gets an error naming the file (never an empty
answer); unreadable lines are named with their line number in that error; a repeated id keeps
its last line, as a dict does. No frame is decoded for this model (`needs_frames`).

The identity is the file's name (or `--model-opt name=LABEL`, the row's name in tables) and the
digest of its bytes, so editing the file asks again (new store keys) and moving it does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue

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
    repeated: list[str] = field(default_factory=list)  # ids given more than once


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
        if str(key) in read.answers:
            read.repeated.append(str(key))
        read.answers[str(key)] = answer
    return read


class PredictionsFile(Model):
    needs_frames = False

    def __init__(self, path: Path, name: str | None = None) -> None:
        if not path.is_file():
            raise ConfigError(f"predictions file {path}: not found")
        self.path = path
        self.spec = f"predictions:{name or path.name}"
        self.lines = read_prediction_lines(path)
        self.digest = file_digest(path)

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
