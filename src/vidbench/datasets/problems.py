"""Problems found while loading a dataset: each names the record and the file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    record: str  # the record id (uid, question key, video id) or "" for a whole-file problem
    path: Path
    message: str

    def __str__(self) -> str:
        where = f"{self.record}: " if self.record else ""
        return f"{where}{self.message} [{self.path}]"


@dataclass
class Loaded(Generic[T]):
    """What a loader read: the good records and every problem with the bad ones."""

    items: list[T]
    problems: list[Problem]
