"""An annotation project on disk: PROJECT/project.json (the dataset folder it annotates) and
PROJECT/annotate.sqlite (everything people do). The red-team workspace of AutoEval-Video rules
lives in PROJECT/redteam/ (benchmarks/autoeval_video/redteam.py's format).

project.json names the data folder twice: as it was (absolute) and as seen from the project, so
a project moved together with its data folder finds it again. A data folder that is not there,
a database that is missing or not SQLite's, is a ConfigError naming it: a project never opens
as if its work were gone."""

from __future__ import annotations

import json
import os
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
        # the data folder also as seen from the project: the two moved together are found again
        beside = os.path.relpath(data.resolve(), path.resolve())
        settings = {"format": 1, "data": str(data.resolve()), "data_from_project": beside}
        write_json(path / SETTINGS, settings, indent=1)
        _create(path / DATABASE)
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
            beside = settings.get("data_from_project")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ConfigError(f"{file}: unreadable project settings ({e})") from e
        if not data.is_dir() and isinstance(beside, str) and (path / beside).is_dir():
            data = path / beside  # the project and its data folder moved together
        if not data.is_dir():
            raise ConfigError(
                f"{file}: its data folder {data} is not there (moved, or on a disk not mounted?): "
                f'put it back, or set "data" in {file} to where it is now'
            )
        if not (path / DATABASE).is_file():  # a new empty one would look like work lost
            raise ConfigError(
                f"{path}: no {DATABASE}, which holds all of the project's work (copied or moved "
                f"without it?): put it back beside {SETTINGS}"
            )
        _create(path / DATABASE)  # idempotent: a project from an older version gains tables
        return cls(path.resolve(), data.resolve())


def _create(database: Path) -> None:
    """The project's database, made or brought up to date; a ConfigError naming it when it
    cannot be (a file cut short or not SQLite's, a read-only folder), never a traceback."""
    try:
        db.create(database)
    except sqlite3.DatabaseError as e:  # also sqlite3.OperationalError: cannot open, read-only
        raise ConfigError(
            f"{database}: not a usable SQLite database ({e}); it holds all of the project's "
            "work: restore it from a backup (a copy taken while the app was serving needs its "
            "-wal file beside it)"
        ) from None
