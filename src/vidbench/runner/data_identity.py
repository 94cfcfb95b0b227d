"""What data a results folder holds answers about, so a run never replaces them with results about
other data.

A run's data identity is its rows: each sample id with a fingerprint of what the model is asked
about it (the question, the options, the videos' file names, the window). The store keeps the
identity of every run made in the folder (runner/store.py, table `data_rows`). A new run over the
folder must read the same data: rows it shares with the stored ones must have the same
fingerprints, and it must share at least one (rows may be added, e.g. a bad row fixed, or
--limit raised). A run that loads no row at all, or reads other data, stops before it writes
anything (ConfigError: exit 2) naming both data folders; `vidbench run --fresh` starts over in the
folder instead. The gold answers are not in the fingerprint: a corrected answer is a rescore of
the same data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vidbench.core.errors import ConfigError
from vidbench.core.records import MediaRef, Sample
from vidbench.report.results_dir import (
    RESULTS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    TABLE_FILES,
    TIMING_FILE,
    USAGE_FILE,
)
from vidbench.runner.store import Store
from vidbench.tasks.problems import Problem


@dataclass(frozen=True)
class DataIdentity:
    folder: str  # the data folder the rows were read from
    rows: dict[str, str]  # sample id -> fingerprint


def fingerprint(sample: Sample, videos: list[list[object]] | None = None) -> str:
    """What the model is asked about a sample, whichever folder holds it (an export, a moved
    benchmark): the question, options, videos by file name, and the window. `videos`: those of
    its media (`video_names`), when known already."""
    media = sample.media
    videos = video_names(media) if videos is None else videos
    parts = [sample.question, list(sample.options), videos, media.start_s, media.end_s]
    return hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).hexdigest()


def video_names(media: MediaRef) -> list[list[object]]:
    return [[view, path.name] for view, path in sorted(media.videos.items())]


def identity_of(samples: Sequence[Sample], folder: Path | str) -> DataIdentity:
    # the questions of one object (4D-Bench: five, each naming its 24 videos) share its MediaRef:
    # its video names are listed once (by the object's id: `samples` keeps every one alive)
    names: dict[int, list[list[object]]] = {}
    rows = {}
    for sample in samples:
        videos = names.get(id(sample.media))
        if videos is None:
            videos = names[id(sample.media)] = video_names(sample.media)
        rows[sample.id] = fingerprint(sample, videos)
    return DataIdentity(str(Path(folder).absolute()), rows)


def stored_identity(results_dir: Path) -> DataIdentity | None:
    """The identity the folder's store holds; None for a folder without runs."""
    if not (results_dir / Store.FILENAME).is_file():
        return None
    with Store(results_dir) as store:  # as every stage opens it (a full disk says so)
        rows = store.data_rows()
    if not rows:
        return None
    folders = [folder for _, folder in rows.values()]
    return DataIdentity(max(set(folders), key=folders.count), {k: f for k, (f, _) in rows.items()})


def _no_rows(
    stored: DataIdentity | None, new: DataIdentity, problems: Sequence[Problem], results_dir: Path
) -> str:
    shown = "".join(f"\n  {p}" for p in problems[:5])
    more = f"\n  ... and {len(problems) - 5} more" if len(problems) > 5 else ""
    kept = f" (it keeps its run over {stored.folder})" if stored else ""
    return (
        f"no row loads from {new.folder} ({len(problems)} problem(s)){shown}{more}\n"
        f"nothing was written to {results_dir}{kept}: check --data (vidbench validate)"
    )


def check_same_data(
    stored: DataIdentity | None,
    new: DataIdentity,
    results_dir: Path,
    problems: Sequence[Problem] = (),
) -> None:
    """ConfigError when the run loads no row, or reads other data than the folder holds."""
    if not new.rows:
        raise ConfigError(_no_rows(stored, new, problems, results_dir))
    if stored is None:
        return
    shared = stored.rows.keys() & new.rows.keys()
    changed = sorted(i for i in shared if stored.rows[i] != new.rows[i])
    if shared and not changed:
        return
    if changed:
        named = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
        how = (
            f"{len(changed)} of the {len(shared)} rows they share differ (question, options, "
            f"videos or window: {named})"
        )
    else:
        how = "they share no row"
    raise ConfigError(
        f"{results_dir} holds a run over other data: {stored.folder} ({len(stored.rows)} rows); "
        f"this run reads {new.folder} ({len(new.rows)} rows), and {how}. Nothing was written. "
        f"Give another --out, or --fresh to start over in {results_dir} (its answers and "
        "results are deleted)"
    )


def record(results_dir: Path, identity: DataIdentity) -> None:
    """Add the run's rows to the folder's identity (after check_same_data let it run)."""
    with Store(results_dir) as store:
        store.add_data_rows(identity.rows, identity.folder)


RUN_FILES = (RUN_FILE, SAMPLES_FILE, USAGE_FILE, TIMING_FILE, RESULTS_FILE, *TABLE_FILES)


def start_over(results_dir: Path) -> list[Path]:
    """Delete what a run keeps in the folder (`--fresh`): its store, run.json and the results
    files; other files are left. The files deleted."""
    store = results_dir / Store.FILENAME
    doomed = [store, store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")]
    doomed += [results_dir / name for name in RUN_FILES]
    gone = [path for path in doomed if path.is_file()]
    for path in gone:
        path.unlink()
    return gone
