"""Where a run's samples come from: the task's loader on a data folder, the task's own folder
(a declared benchmark's, when --data is left out), or an exported copy of a benchmark
(tasks/exported.py), whichever the data names. The run, the HTML report and the analyses load
samples through here, so each accepts all three."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from vidbench.core.errors import ConfigError, VidbenchError, code_of
from vidbench.core.records import Sample
from vidbench.tasks.base import Task
from vidbench.tasks.exported import is_export, read_export
from vidbench.tasks.problems import Loaded, Problem

# run.json's `data` when --data was left out: the task's own data.
OWN_DATA = ""


def data_folder(task: Task, data: str | Path) -> Path:
    """The folder `data` names for `task` (OWN_DATA: the task's own)."""
    if str(data) != OWN_DATA:
        return Path(data)
    if task.own_data is None:
        raise ConfigError(f"{task.name} has no data of its own: give --data DIR")
    return task.own_data


def load_samples(task: Task, data: str | Path) -> Loaded[Sample]:
    """The task's samples in `data`: an exported copy is read as exported, anything else by the
    task's own loader (`checked`)."""
    folder = data_folder(task, data)
    if is_export(folder):
        return read_export(folder, task.name.partition(":")[0])
    return Loaded.gathered(checked(task, folder, lambda: task.load(folder).stream()))


def stream_samples(task: Task, data: str | Path) -> Iterator[Sample | Problem]:
    """`load_samples`, a sample (or problem) at a time: the task's own `iter_load` streams where
    the task can (`checked`); an exported copy is read whole."""
    folder = data_folder(task, data)
    if is_export(folder):
        return read_export(folder, task.name.partition(":")[0]).stream()
    return checked(task, folder, lambda: task.iter_load(folder))


def checked(
    task: Task, folder: Path, records: Callable[[], Iterable[object]]
) -> Iterator[Sample | Problem]:
    """What a task's loader gives, held to its contract: Samples and Problems. Anything else it
    gives, and an exception it raises (a bug of its code, a plugin's), becomes a Problem naming
    the task and its code (status data): the records read before it are kept, and the run is
    incomplete. A VidbenchError (a whole-file DataError, a ConfigError) is the loader's own
    word, raised as it is."""
    where = f"task {task.name} ({code_of(task)})"
    given = 0
    try:
        for record in records():
            given += 1
            if isinstance(record, Sample | Problem):
                yield record
            else:
                kind = type(record).__name__
                said = f"{where}: its loader gave a {kind}, not a Sample or a Problem"
                yield Problem(f"record {given}", folder, said)
    except VidbenchError:
        raise
    except Exception as e:  # the loader's bug: what it read is kept, the rest said to be missing
        said = f"{where}: its loader raised {e!r} after {given} record(s); the rest were not read"
        yield Problem("", folder, said)
