"""An annotation project on disk: PROJECT/project.json (the dataset folder it annotates) and
PROJECT/annotate.sqlite (everything people do). The red-team workspace of AutoEval-Video rules
lives in PROJECT/redteam/ (benchmarks/autoeval_video/redteam.py's format)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from vidbench.annotate import db
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_json

SETTINGS = "project.json"
DATABASE = "annotate.sqlite"
REDTEAM = "redteam"


@dataclass(frozen=True)
class Project:
    path: Path
    data: Path  # the dataset folder: media are served from here only

    @property
    def database(self) -> Path:
        return self.path / DATABASE

    @property
    def redteam(self) -> Path:
        return self.path / REDTEAM

    def connect(self) -> sqlite3.Connection:
        return db.connect(self.database)

    @classmethod
    def init(cls, path: Path, data: Path) -> Project:
        path, data = Path(path), Path(data)
        if (path / SETTINGS).exists():
            raise ConfigError(f"{path}: a project exists already")
        if not data.is_dir():
            raise ConfigError(f"--data {data}: not a folder")
        path.mkdir(parents=True, exist_ok=True)
        settings = {"format": 1, "data": str(data.resolve())}
        write_json(path / SETTINGS, settings, indent=1)
        db.create(path / DATABASE)
        return cls(path.resolve(), data.resolve())

    @classmethod
    def open(cls, path: Path) -> Project:
        path = Path(path)
        file = path / SETTINGS
        if not file.is_file():
            raise ConfigError(
                f"{path}: not an annotation project (no {SETTINGS}); see annotate init"
            )
        try:
            settings = json.loads(file.read_text("utf-8"))
            data = Path(settings["data"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{file}: unreadable project settings ({e})") from e
        db.create(path / DATABASE)  # idempotent: a project from an older version gains tables
        return cls(path.resolve(), data)
