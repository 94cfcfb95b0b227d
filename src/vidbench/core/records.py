"""Benchmark samples and the media they point at, and how records are taken a batch at a time."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Literal, TypeVar

import numpy

from vidbench.core.files import Json

SampleKind = Literal["mcq", "caption", "open"]


@dataclass(frozen=True)
class MediaRef:
    """Where a sample's pixels live.

    `videos` maps a view id to a video file: one entry (view 0) for a plain video, 24 for a 4D
    object. `start_s`/`end_s` cut a window out of a full-length video.
    """

    videos: dict[int, Path]
    start_s: float | None = None
    end_s: float | None = None

    @classmethod
    def single(
        cls, path: Path, start_s: float | None = None, end_s: float | None = None
    ) -> MediaRef:
        return cls({0: Path(path)}, start_s, end_s)


@dataclass(frozen=True)
class Sample:
    """One benchmark item, in a benchmark-neutral shape.

    `answer` is the gold option letter ("A".."D") for mcq, `references` the gold captions or
    answers, `rules` a per-instance judging rule. `metadata` keeps everything else the loader read
    (the subtask, the official prompt rendering, ...): JSON values (samples.jsonl and exports
    keep them), which the benchmark's task narrows where it reads them.
    """

    id: str
    benchmark: str
    kind: SampleKind
    media: MediaRef
    question: str | None = None
    options: tuple[str, ...] = ()
    answer: str | None = None
    references: tuple[str, ...] = ()
    rules: str | None = None
    metadata: dict[str, Json] = field(default_factory=dict)


T = TypeVar("T")
V = TypeVar("V")  # a record, as a loader reads it


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last may be shorter), taken as they come
    (itertools.batched is Python 3.12's; vidbench runs on 3.11)."""
    remaining = iter(items)
    while batch := list(islice(remaining, size)):
        yield batch


_HASH_MASK = (1 << 64) - 1  # hash() as an unsigned 64-bit number, for array("Q")


def key_hash(key: str) -> int:
    """`key`'s 64-bit hash, as `repeated_hashes` keeps it."""
    return hash(key) & _HASH_MASK


def repeated_hashes(keys: Iterable[str]) -> set[int]:
    """The hashes (`key_hash`) that more than one of `keys` has: every key that repeats has one
    (and, rarely, a key whose hash another key shares: `repeated_records`' second pass, over
    just the records with these hashes, sorts that out). What it holds while it reads is 8
    bytes a key, in an array, not a set of the keys."""
    return repeated_among(key_hash(key) for key in keys)


def repeated_among(hashes: Iterable[int]) -> set[int]:
    """The hashes (`key_hash`) given more than once, held as `repeated_hashes` holds them."""
    found = array("Q", hashes)
    values, counts = numpy.unique(numpy.frombuffer(found, dtype=numpy.uint64), return_counts=True)
    return set(values[counts > 1].tolist())


def repeated_records(
    first: Iterable[tuple[str, int, V]], again: Callable[[], Iterable[tuple[str, int, V]]]
) -> tuple[dict[str, list[int]], dict[str, V]]:
    """The keys that more than one record has, each with its records' positions, and each
    one's last record (a repeated key keeps it, as a dict does). `first` and `again()` give
    the same (key, position, record) of each usable record of a file, read twice: so a loader
    that streams 100,000 records finds its repeated ids without holding them (8 bytes a record,
    `repeated_hashes`); only when two hashes are equal is `again()` read, holding just the
    records whose key has a repeated hash."""
    hashes = repeated_hashes(key for key, _, _ in first)
    positions: dict[str, list[int]] = {}
    last: dict[str, V] = {}
    if hashes:
        for key, position, record in again():
            if key_hash(key) in hashes:
                positions.setdefault(key, []).append(position)
                last[key] = record
    keys = {key: where for key, where in positions.items() if len(where) > 1}
    return keys, {key: last[key] for key in keys}
