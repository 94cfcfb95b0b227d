"""What an export is asked (`ExportRequest`, its tasks' loaded samples) and what it wrote
(`ExportedDataset`: each config's rows and columns, the videos, the construction records found)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.core.records import Sample
from vidbench.export.construction import Construction
from vidbench.tasks.problems import Loaded, Problem

ORIGINAL = "original_"  # the column of a source field named like one of vidbench's own


@dataclass(frozen=True)
class ExportTask:
    config: str  # its config name in the dataset (e.g. 4dbench-qa)
    task: str  # the task base name vidbench reads it back as (`--data OUT`)
    loaded: Loaded[Sample]
    protocol: str = ""  # how vidbench scores it (the task's protocol)
    judged: bool = False  # scored by an LLM judge: running it needs --judge


@dataclass(frozen=True)
class ExportRequest:
    source: Path
    out: Path
    benchmark: str  # its name, e.g. 4dbench, custom
    title: str
    license: str
    tasks: Sequence[ExportTask]
    description: str = ""
    files: dict[str, Path] = field(default_factory=dict)  # also copied: OUT/NAME <- path
    skip_bad: bool = False
    scoring: dict[str, str] = field(default_factory=dict)  # config -> how it is scored (card)


@dataclass
class ConfigSummary:
    task: str
    rows: int
    videos: int
    path: str  # the Parquet file, relative to OUT
    columns: list[str]  # beyond ROW_COLUMNS: the source's fields
    json_columns: list[str] = field(default_factory=list)  # of those, written as JSON text


@dataclass
class ExportedDataset:
    out: Path
    configs: dict[str, ConfigSummary]
    videos: int
    problems: list[Problem]
    construction: Construction
