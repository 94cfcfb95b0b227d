"""The one owner of a results directory's files: every stage and command reads and writes them
through `ResultsDir`, so their names, encoding and atomic replacement are decided once.

RESULTS_DIR/
  run.json        the run's configuration (so the judge, score and report stages run alone)
  store.sqlite    every model answer, judge reply and failure (runner/store.py owns it)
  samples.jsonl   one scored record per sample (score stage)
  usage.json      requests answered, tokens in and out (score stage)
  timing.json     a local model's device, preparation and wall seconds (infer stage)
  results.json    the paper table's columns, intervals, errors, provenance (report stage)
  table.md, table.csv, table.tex   the same row as Markdown, CSV and LaTeX (booktabs)
  *.jsonl, *.json other records of a command (judgments, agreement items, error types)

Every file is written whole to a temporary name and then renamed, so a reader (or a run killed
half-way) never sees half a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import read_json, read_jsonl, write_atomic, write_json, write_jsonl
from vidbench.report.tables import to_csv, to_latex, to_markdown

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
USAGE_FILE = "usage.json"
TIMING_FILE = "timing.json"
RESULTS_FILE = "results.json"
TABLE_FILES = ("table.md", "table.csv", "table.tex")


def write_tables(out: Path, results: Sequence[dict[str, Any]]) -> None:
    """table.md, table.csv and table.tex (booktabs) of one or more results, side by side."""
    write_atomic(out / TABLE_FILES[0], to_markdown(results).encode())
    write_atomic(out / TABLE_FILES[1], to_csv(results).encode())
    write_atomic(out / TABLE_FILES[2], to_latex(results).encode())


@dataclass(frozen=True)
class ResultsDir:
    path: Path

    def file(self, name: str) -> Path:
        return self.path / name

    def _read_json(self, name: str, missing: str) -> Any:
        path = self.file(name)
        if not path.is_file():
            raise ConfigError(f"{path} is missing; {missing}")
        try:
            return read_json(path)
        except DataError as e:
            raise ConfigError(str(e)) from e

    # run.json
    def write_config(self, config: dict[str, Any]) -> None:
        write_json(self.file(RUN_FILE), config)

    def read_config(self) -> dict[str, Any]:
        if not self.file(RUN_FILE).is_file():
            raise ConfigError(f"{self.path}: no run.json; run the infer stage first")
        return self._read_json(RUN_FILE, "run the infer stage first")

    # samples.jsonl and usage.json: the score stage
    def write_scored(self, records: Sequence[dict[str, Any]], usage: dict[str, Any]) -> None:
        write_jsonl(self.file(SAMPLES_FILE), records)
        write_json(self.file(USAGE_FILE), usage)

    def read_samples(self) -> list[dict[str, Any]]:
        path = self.file(SAMPLES_FILE)
        if not path.is_file():
            raise ConfigError(f"{path} is missing; run the score stage first")
        return read_jsonl(path)

    def read_usage(self) -> dict[str, Any]:
        return self._read_json(USAGE_FILE, "run the score stage first")

    # results.json and the tables: the report stage
    def write_results(self, results: dict[str, Any]) -> None:
        write_json(self.file(RESULTS_FILE), results)
        write_tables(self.path, [results])

    def read_results(self) -> dict[str, Any]:
        return self._read_json(RESULTS_FILE, "run the report stage first")

    def read_optional(self, name: str, key: str) -> dict[str, Any]:
        """`{key: the file's content}`, or nothing when the file is not there."""
        if not self.file(name).is_file():
            return {}
        return {key: self._read_json(name, "")}

    # a command's own records
    def write_records(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        write_jsonl(self.file(name), records)

    def write_json(self, name: str, data: Any) -> None:
        write_json(self.file(name), data)
