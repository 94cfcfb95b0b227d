"""The one owner of a results directory's files: every stage and command reads and writes them
through `ResultsDir`, so their names, encoding and atomic replacement are decided once.

RESULTS_DIR/
  run.json        the run's configuration (so the judge, score and report stages run alone)
  store.sqlite    every model answer, judge reply and failure (runner/store.py owns it)
  samples.jsonl   one scored record per sample (score stage)
  usage.json      requests answered, tokens in and out (score stage)
  scored.json     what samples.jsonl was scored from and its digest (score stage), so a report
                  stage never shows rows of another model, variant or judge (or rows edited)
  timing.json     a local model's device, preparation and wall seconds (infer stage)
  results.json    the paper table's columns, intervals, errors, provenance (report stage)
  table.md, table.csv, table.tex   the same row as Markdown, CSV and LaTeX (booktabs)
  *.jsonl, *.json other records of a command (judgments, agreement items, error types)

Every file is written whole to a temporary name and then renamed, so a reader (or a run killed
half-way) never sees half a file. run.json, samples.jsonl and results.json are read and written
as the typed models of report/schema.py; a file that does not fit them is a DataError naming the
file, line and field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, JsonValue, ValidationError

from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import (
    Json,
    json_lines,
    json_object,
    read_json,
    write_atomic,
    write_json,
    write_jsonl,
)
from vidbench.report.schema import SCHEMA_VERSION, Results, RunFile, SampleRow
from vidbench.report.tables import to_csv, to_latex, to_markdown

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
USAGE_FILE = "usage.json"
SCORED_FILE = "scored.json"
TIMING_FILE = "timing.json"
RESULTS_FILE = "results.json"
TABLE_FILES = ("table.md", "table.csv", "table.tex")


Model = TypeVar("Model", bound=BaseModel)


def _problem(error: ValidationError) -> str:
    """The first thing wrong, in one line: `field.sub: message`."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where or 'the value'}: {first['msg']}{more}"


def typed(model: type[Model], value: JsonValue, where: str) -> Model:
    """`value` as `model`; DataError saying `where` and what does not fit."""
    data = json_object(value, where)
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise DataError(
            f"{where}: schema_version {version!r} is not one this vidbench reads (up to "
            f"{SCHEMA_VERSION}); use the vidbench that wrote it, or a newer one"
        )
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise DataError(f"{where}: {_problem(e)}") from e


def read_required_json(path: Path, missing: str) -> JsonValue:
    """A JSON file a command needs; ConfigError when it is missing (`missing`: what makes it) or
    unreadable."""
    if not path.is_file():
        raise ConfigError(f"{path} is missing; {missing}")
    try:
        return read_json(path)
    except DataError as e:
        raise ConfigError(str(e)) from e


def read_required(path: Path, model: type[Model], missing: str) -> Model:
    """`read_required_json` as `model` (see `typed`); ConfigError when it does not fit."""
    data = read_required_json(path, missing)
    try:
        return typed(model, data, str(path))
    except DataError as e:
        raise ConfigError(str(e)) from e


def read_results_file(path: Path) -> Results:
    """A results.json wherever it is (a results directory's, or a file given by its path)."""
    return read_required(path, Results, "run the report stage first")


def read_sample_rows(path: Path) -> list[SampleRow]:
    """Every row of a samples.jsonl; DataError naming the file and line of the first bad one."""
    return list(iter_sample_rows(path))


def iter_sample_rows(path: Path) -> Iterator[SampleRow]:
    """The rows of a samples.jsonl one at a time, as `read_sample_rows` reads them."""
    for _, row in sample_rows_with_offsets(path):
        yield row


def sample_rows_with_offsets(path: Path) -> Iterator[tuple[int, SampleRow]]:
    """Each row of a samples.jsonl with the byte offset of its line, read a line at a time (a
    large run's rows are never all in memory); DataError as `read_sample_rows`."""
    for line in json_lines(path):
        if line.error is not None:
            raise DataError(f"{line.where(path)}: {line.error}")
        yield line.offset, typed(SampleRow, line.value, line.where(path))


def sample_rows_at(path: Path, offsets: Sequence[int]) -> list[SampleRow]:
    """The rows of a samples.jsonl whose lines start at `offsets` (`sample_rows_with_offsets`)."""
    rows = []
    with path.open("rb") as handle:
        for offset in offsets:
            handle.seek(offset)
            where = f"{path} byte {offset}"
            try:
                value = json.loads(handle.readline())
            except (json.JSONDecodeError, UnicodeDecodeError) as e:  # changed since it was read
                raise DataError(f"{where}: not a JSON line ({e})") from e
            rows.append(typed(SampleRow, value, where))
    return rows


def write_tables(out: Path, results: Sequence[Results]) -> None:
    """table.md, table.csv and table.tex (booktabs) of one or more results, side by side."""
    write_atomic(out / TABLE_FILES[0], to_markdown(results).encode())
    write_atomic(out / TABLE_FILES[1], to_csv(results).encode())
    write_atomic(out / TABLE_FILES[2], to_latex(results).encode())


@dataclass(frozen=True)
class ResultsDir:
    path: Path

    def file(self, name: str) -> Path:
        return self.path / name

    # run.json
    def write_config(self, config: RunFile) -> None:
        write_json(self.file(RUN_FILE), config.model_dump(mode="json"))

    def read_config(self) -> RunFile:
        if not self.file(RUN_FILE).is_file():
            raise ConfigError(f"{self.path}: no run.json; run the infer stage first")
        return read_required(self.file(RUN_FILE), RunFile, "run the infer stage first")

    # samples.jsonl and usage.json: the score stage
    def write_scored(
        self,
        rows: Iterable[SampleRow],
        usage: Mapping[str, Json],
        basis: Callable[[], Mapping[str, Json]],
    ) -> None:
        """samples.jsonl (each row written as it comes), usage.json, then scored.json: `basis()`
        (what the rows were scored from, asked once every row is written: the digest of the
        data is made as the rows are) with the digest of samples.jsonl. scored.json goes
        first and comes back last, so a stage stopped between the files leaves none; so do
        results.json and the tables, which describe the rows replaced (the report stage writes
        them again)."""
        self._remove(SCORED_FILE, RESULTS_FILE, *TABLE_FILES)
        digest = hashlib.sha256()

        def lines() -> Iterator[bytes]:
            for row in rows:
                line = (row.line() + "\n").encode()
                digest.update(line)
                yield line

        write_atomic(self.file(SAMPLES_FILE), lines())
        write_json(self.file(USAGE_FILE), usage)
        write_json(self.file(SCORED_FILE), {**basis(), "samples_sha256": digest.hexdigest()})

    def _remove(self, *names: str) -> list[str]:
        """Remove these files where they are; the names of those removed."""
        removed = [name for name in names if self.file(name).is_file()]
        for name in removed:
            self.file(name).unlink()
        return removed

    def stored_basis(self) -> dict[str, JsonValue] | None:
        """What the score stage stamped samples.jsonl with (`write_scored`), not checked
        against the file; None when there is no stamp."""
        path = self.file(SCORED_FILE)
        if not path.is_file():
            return None
        try:
            stamp = json_object(read_json(path), str(path))
        except DataError:
            return None
        stamp.pop("samples_sha256", None)
        return stamp

    def forget_scored(self) -> list[str]:
        """Remove samples.jsonl, usage.json, scored.json, results.json and the tables (the
        score and report stages' files); the names of those removed."""
        return self._remove(SAMPLES_FILE, USAGE_FILE, SCORED_FILE, RESULTS_FILE, *TABLE_FILES)

    def scored_basis(self) -> dict[str, JsonValue]:
        """What samples.jsonl was scored from (`write_scored`'s basis); ConfigError when no
        score stage finished here, or samples.jsonl is not the file it wrote (edited, cut)."""
        path = self.file(SCORED_FILE)
        redo = f"run the score stage again (vidbench run --out {self.path} --stage score)"
        if not path.is_file():
            raise ConfigError(
                f"{path} is missing: no score stage finished writing {self.file(SAMPLES_FILE)} "
                f"for this run (none ran since its infer stage, or it was stopped); {redo}"
            )
        stamp = json_object(read_required_json(path, redo), str(path))
        try:
            with self.file(SAMPLES_FILE).open("rb") as handle:
                digest = hashlib.file_digest(handle, "sha256")
        except FileNotFoundError:
            raise ConfigError(f"{self.file(SAMPLES_FILE)} is missing; {redo}") from None
        if stamp.pop("samples_sha256", None) != digest.hexdigest():
            raise ConfigError(
                f"{self.file(SAMPLES_FILE)} is not the file the score stage wrote (it was "
                f"edited, cut or replaced since); {redo}"
            )
        return stamp

    def read_samples(self) -> list[SampleRow]:
        return list(self.iter_samples())

    def iter_samples(self) -> Iterator[SampleRow]:
        """The rows of samples.jsonl one at a time (ConfigError at once when it is missing)."""
        path = self.file(SAMPLES_FILE)
        if not path.is_file():
            raise ConfigError(f"{path} is missing; run the score stage first")
        return iter_sample_rows(path)

    def read_usage(self) -> dict[str, JsonValue]:
        path = self.file(USAGE_FILE)
        try:
            return json_object(read_required_json(path, "run the score stage first"), str(path))
        except DataError as e:
            raise ConfigError(str(e)) from e

    # results.json and the tables: the report stage
    def write_results(self, results: Results) -> None:
        write_json(self.file(RESULTS_FILE), results.document())
        write_tables(self.path, [results])

    def read_results(self) -> Results:
        return read_results_file(self.file(RESULTS_FILE))

    def read_optional(self, name: str, key: str) -> dict[str, JsonValue]:
        """`{key: the file's content}`, or nothing when the file is not there."""
        if not self.file(name).is_file():
            return {}
        return {key: read_required_json(self.file(name), "")}

    # a command's own records
    def write_records(self, name: str, records: Iterable[Mapping[str, object]]) -> None:
        write_jsonl(self.file(name), records)

    def write_json(self, name: str, data: object) -> None:
        write_json(self.file(name), data)


def run_folders(
    paths: Sequence[Path], marks: Sequence[str] = (RUN_FILE, RESULTS_FILE, SAMPLES_FILE)
) -> tuple[list[Path], list[str]]:
    """The results directories `paths` name, and what was skipped: a results.json stands for
    its folder; a folder of runs (the demo's results/, a sweep's output, a `--runs N` folder's
    run-1..N) for the runs in it, up to three levels down, a run being a folder holding one of
    `marks` (`vidbench view` shows a `--runs N` folder's results.json, the mean; `vidbench
    audit` needs each run's run.json); any other file is skipped. A folder with nothing of a run
    stays, so the command reading it says what it lacks."""
    found: list[Path] = []
    skipped: list[str] = []
    for path in paths:
        if path.is_file() and path.name == RESULTS_FILE:
            found.append(path.parent)
        elif path.is_file():
            skipped.append(f"{path}: a file, not a results directory: skipped")
        else:
            found += _runs_in(path, marks, depth=3) or [path]
    return found, skipped


def _runs_in(path: Path, marks: Sequence[str], depth: int) -> list[Path]:
    if any((path / name).is_file() for name in marks):
        return [path]
    if depth == 0 or not path.is_dir():
        return []
    children = sorted(p for p in path.iterdir() if p.is_dir())
    return [run for child in children for run in _runs_in(child, marks, depth - 1)]
