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

import contextlib
import hashlib
import json
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import JsonValue

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.records import MediaRef, Sample, repeated_records
from vidbench.report.results_dir import (
    RESULTS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    SCORED_FILE,
    TABLE_FILES,
    TIMING_FILE,
    USAGE_FILE,
    ResultsDir,
)
from vidbench.runner import spool
from vidbench.runner.run_config import RunConfig
from vidbench.runner.samples import RunSamples, SampleSet
from vidbench.runner.store import Store
from vidbench.tasks.base import Task
from vidbench.tasks.data import data_folder
from vidbench.tasks.problems import Problem

SCORED_DATA = "data"  # scored.json: the content_digest of the samples scored


def fingerprint(sample: Sample, videos: str | None = None) -> str:
    """What the model is asked about a sample, whichever folder holds it (an export, a moved
    benchmark): the question, options, videos by file name, and the window. `videos`: those of
    its media as JSON (`video_names`), when known already."""
    media = sample.media
    videos = video_names(media) if videos is None else videos
    # json.dumps([question, options, videos, start, end]) with the videos' JSON made once
    parts = ", ".join(
        (json.dumps(sample.question), json.dumps(list(sample.options)), videos,
         json.dumps(media.start_s), json.dumps(media.end_s))
    )  # fmt: skip
    return hashlib.blake2b(f"[{parts}]".encode(), digest_size=8).hexdigest()


def content_digest(samples: Iterable[Sample]) -> str:
    """What the prompts of `samples` are built from, as one digest whatever their order (a
    report reads them in its own): each sample's id, fingerprint and fields (`metadata`: a
    declared benchmark's prompt template reads any of its row's fields)."""
    digest = ContentDigest()
    for _ in digest.each(samples):
        pass
    return digest.hexdigest()


class ContentDigest:
    """`content_digest` of the samples that pass through `each`, so a stage that reads them
    anyway (the score stage) reads them once."""

    def __init__(self) -> None:
        self._total = 0

    def each(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        for sample, printed in _fingerprinted(samples):
            text = json.dumps([sample.id, printed, sample.metadata], default=str, sort_keys=True)
            self._total += int.from_bytes(
                hashlib.blake2b(text.encode(), digest_size=16).digest(), "big"
            )
            yield sample

    def hexdigest(self) -> str:
        return f"{self._total % 2**128:032x}"


def data_changed(
    config: RunConfig, data: Path, stamp: Mapping[str, JsonValue] | None, samples: Iterable[Sample]
) -> str | None:
    """What to say when `samples` (the run's data in `data` as it is now, the rows scored) are
    not what the score stage's rows were made from (`stamp`: scored.json's basis), else None;
    None too when the stamp does not say (a score stage of an older vidbench)."""
    scored = None if stamp is None else stamp.get(SCORED_DATA)
    if scored is None or scored == content_digest(samples):
        return None
    return _changed(config, data)


def _changed(config: RunConfig, data: Path) -> str:
    """What `data_changed` says: the run's data changed, and the command that runs it again."""
    again = [config.task, *(["--data", config.data] if config.data else [])]
    again += ["--model", config.model, "--out", config.out]
    again += ["--judge", config.judge] if config.judge else []
    return (
        f"the data in {data} changed since the score stage wrote {SAMPLES_FILE}: the "
        "question, options, videos or another field of some rows (what the prompts are built "
        "from, or the gold) is not what was answered and scored. Run the stages again from the "
        f"infer stage (vidbench run {shlex.join(again)}, with the run's other options): it asks "
        "again only where a prompt changed, then scores and reports"
    )


def data_changed_now(
    config: RunConfig, task: Task, stamp: Mapping[str, JsonValue] | None
) -> str | None:
    """`data_changed` of the run's data as it is now (its samples read again, the first
    --limit, no video decoded); None too when the data folder is not there (the results files
    alone, copied: nothing to compare with)."""
    if stamp is None or stamp.get(SCORED_DATA) is None:  # nothing to compare with: not read
        return None
    data = data_folder(task, config.data)
    if not data.exists():
        return None
    with contextlib.closing(RunSamples(task, config.data, config.limit)) as scored:
        return data_changed(config, data, stamp, scored)


def changed_since_scored(folders: Sequence[Path]) -> dict[Path, str]:
    """The results directories among `folders` whose data changed since their score stage
    (`data_changed_now`), each with what to say: what `vidbench report` and `figures` mark
    stale (cli.py hands it to report/commands.py, below runner/); a `--runs N` folder (the
    mean of run-1..N) when one of its runs' did. A folder whose run, task or data cannot be
    read is not said to have changed (its results.json is shown as it is); the runs of one
    task, data folder and --limit read the data once."""
    now: dict[tuple[str, str | None, int | None], tuple[Path, str] | None] = {}
    changed: dict[Path, str] = {}
    for folder in folders:
        runs = [folder] if (folder / SCORED_FILE).is_file() else _repeated_runs(folder)
        why = next((w for run in runs if (w := _changed_run(run, now)) is not None), None)
        if why is not None:
            changed[folder] = why
    return changed


def _repeated_runs(folder: Path) -> list[Path]:
    """The runs of a `vidbench run --runs N` folder (run-1..N), or none."""
    return sorted(p for p in folder.glob("run-*") if (p / SCORED_FILE).is_file())


def _changed_run(
    folder: Path, now: dict[tuple[str, str | None, int | None], tuple[Path, str] | None]
) -> str | None:
    """What `changed_since_scored` says of one run's folder, or None; `now`: the digests of
    the data read so far, by task, data and --limit (added to)."""
    stamp = ResultsDir(folder).stored_basis()
    scored = None if stamp is None else stamp.get(SCORED_DATA)
    if scored is None:  # no score stage, or one of an older vidbench: nothing read
        return None
    try:
        config = RunConfig.load(folder)
        key = (config.task, config.data, config.limit)
        if key not in now:
            now[key] = _digest_now(config)
    except VidbenchError:  # run.json, the task or the data not readable: not compared
        return None
    found = now[key]
    return None if found is None or found[1] == scored else _changed(config, found[0])


def _digest_now(config: RunConfig) -> tuple[Path, str] | None:
    """The run's data folder and the `content_digest` of its samples as they are now; None
    when the folder is not there."""
    task = config.open_task()
    data = data_folder(task, config.data)
    if not data.exists():
        return None
    with contextlib.closing(RunSamples(task, config.data, config.limit)) as samples:
        return data, content_digest(samples)


def video_names(media: MediaRef) -> str:
    """The media's videos by view and file name, as JSON."""
    return json.dumps([[view, path.name] for view, path in sorted(media.videos.items())])


def fingerprints(samples: Iterable[Sample]) -> Iterator[tuple[str, str]]:
    """(sample id, fingerprint) of each sample."""
    return ((sample.id, printed) for sample, printed in _fingerprinted(samples))


def _fingerprinted(samples: Iterable[Sample]) -> Iterator[tuple[Sample, str]]:
    """Each sample with its fingerprint."""
    # the questions of one object (4D-Bench: five, each naming its 24 videos) share its MediaRef:
    # its video names are listed once (while it is the last MediaRef seen: a run's samples come
    # a batch at a time, an object's questions together)
    media, videos = None, ""
    for sample in samples:
        if sample.media is not media:
            media, videos = sample.media, video_names(sample.media)
        yield sample, fingerprint(sample, videos)


def check_and_record(
    samples: SampleSet,
    folder: Path | str,
    results_dir: Path,
    problems: Sequence[Problem] = (),
    loader: str = "the loader",
) -> None:
    """Add the run's rows to the folder's identity; ConfigError, before anything is written,
    when the run loads no row, when two of its samples have one id (`loader` names what gave
    them, e.g. a plugin's task), or when it reads other data than the folder holds. The rows
    are compared in the store (SQL), so no set of them is held."""
    folder = str(Path(folder).absolute())
    check_loads(samples, folder, results_dir, problems)
    existing = (results_dir / Store.FILENAME).is_file()
    with Store(results_dir) as store:  # as every stage opens it (a full disk says so)
        stored = store.stored_data() if existing else None
        count = store.stage_run_rows(fingerprints(samples))
        if count < len(samples):  # the store keeps answers by sample id: one each
            raise ConfigError(_repeated_ids(samples, folder, loader))
        if stored is not None:
            _check_same_data(store, stored, folder, count, results_dir)
        store.keep_run_rows(folder)


def check_loads(
    samples: SampleSet, folder: Path | str, results_dir: Path, problems: Sequence[Problem] = ()
) -> None:
    """ConfigError naming the data folder and its problems when the run loads no row."""
    if len(samples):
        return
    stored = None
    if (results_dir / Store.FILENAME).is_file():
        with Store.read_only(results_dir) as store:
            stored = store.stored_data()
    raise ConfigError(_no_rows(stored, str(Path(folder).absolute()), problems, results_dir))


def _no_rows(
    stored: tuple[str, int] | None, folder: str, problems: Sequence[Problem], results_dir: Path
) -> str:
    shown = "".join(f"\n  {p}" for p in problems[:5])
    more = f"\n  ... and {len(problems) - 5} more" if len(problems) > 5 else ""
    kept = f" (it keeps its run over {stored[0]})" if stored else ""
    return (
        f"no row loads from {folder} ({len(problems)} problem(s)){shown}{more}\n"
        f"nothing was written to {results_dir}{kept}: check --data (vidbench validate)"
    )


def _repeated_ids(samples: SampleSet, folder: str, loader: str) -> str:
    """Which ids more than one sample has, found without holding every id (8 bytes a sample:
    core/records.repeated_records)."""

    def numbered() -> Iterator[tuple[str, int, None]]:
        return ((sample.id, number, None) for number, sample in enumerate(samples, 1))

    repeated, _ = repeated_records(numbered(), numbered)
    shown = "; ".join(
        f"{sample_id!r}: samples {', '.join(map(str, numbers))}"
        for sample_id, numbers in list(repeated.items())[:3]
    )
    more = f"; ... ({len(repeated)} ids in all)" if len(repeated) > 3 else ""
    return (
        f"{loader} gave samples that share an id, reading {folder} ({shown}{more}): each sample "
        "needs an id of its own (answers are kept by id, so two would share one); nothing was run"
    )


def _check_same_data(
    store: Store, stored: tuple[str, int], folder: str, count: int, results_dir: Path
) -> None:
    """ConfigError when the staged rows are other data than the folder holds: they share none
    of its rows, or some they share differ."""
    shared, changed, first = store.changed_run_rows()
    if shared and not changed:
        return
    if changed:
        named = ", ".join(first) + (", ..." if changed > len(first) else "")
        how = (
            f"{changed} of the {shared} rows they share differ (question, options, "
            f"videos or window: {named})"
        )
    else:
        how = "they share no row"
    stored_folder, stored_count = stored
    raise ConfigError(
        f"{results_dir} holds a run over other data: {stored_folder} ({stored_count} rows); "
        f"this run reads {folder} ({count} rows), and {how}. Nothing was written. "
        f"Give another --out, or --fresh to start over in {results_dir} (its answers and "
        "results are deleted)"
    )


RUN_FILES = (
    RUN_FILE,
    SAMPLES_FILE,
    USAGE_FILE,
    SCORED_FILE,
    TIMING_FILE,
    RESULTS_FILE,
    *TABLE_FILES,
)


def start_over(results_dir: Path) -> list[Path]:
    """Delete what a run keeps in the folder (`--fresh`): its store, run.json, the results
    files and the answers a killed Ray driver's workers spooled (which the next infer stage
    would store again); other files are left. The files deleted."""
    store = results_dir / Store.FILENAME
    doomed = [store, store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")]
    doomed += [results_dir / name for name in RUN_FILES]
    spooled = spool.folder_of(results_dir)
    doomed += sorted(spooled.glob("*.jsonl")) if spooled.is_dir() else []
    gone = [path for path in doomed if path.is_file()]
    for path in gone:
        path.unlink()
    with contextlib.suppress(OSError):  # not there, or holding files of someone else's
        spooled.rmdir()
    return gone
