"""`vidbench curate 4d render MANIFEST --out DIR`: every asset of a manifest rendered to the
official 4D-Bench layout (OUT/<uid>/view_{k}_rgb_white_bg.mp4 + render.json), objects in
parallel processes (worker.py, one Blender per object), resumable per object.

An object whose render.json is complete for the same settings is skipped, so a rerun redoes only
what failed or what was never done. A worker that fails (the asset cannot load, has no mesh) or
dies (a segfault inside Blender) is recorded with the uid, file and reason; the others go on.
Counts go to OUT/funnel.json (stage "render").

`render_jobs` is the machinery without the manifest: any list of `Job`s, each naming its worker's
input and the record that makes it complete (the Blender probe, fourd/probe, renders through it
with its own worker).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from vidbench.benchmarks.fourd.curate.funnel import StageCount, record_stage
from vidbench.benchmarks.fourd.curate.manifest import Asset, Problem, read_manifest
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.curate.worker import ERROR_FILE, RENDER_FILE
from vidbench.extras import require
from vidbench.media.cache import write_atomic
from vidbench.progress import progress_bar

WORKER_MODULE = "vidbench.benchmarks.fourd.curate.worker"
JOB_FILE = ".job.json"
LOG_FILE = "worker.log"


@dataclass(frozen=True)
class Job:
    """One object to render: its asset, what its worker reads besides the uid, file and output
    folder (``payload``, into JOB.json), and what makes its render.json complete: the record's
    "settings" equal to ``identity`` and ``views`` videos present."""

    asset: Asset
    payload: dict
    identity: dict
    views: int


@dataclass
class RenderReport:
    """What one `curate 4d render` left in OUT: rendered uids, dropped and failed assets."""

    rendered: list[str] = field(default_factory=list)
    skipped: int = 0  # already complete before this run
    dropped: list[Problem] = field(default_factory=list)  # no animation, no motion
    failed: list[Problem] = field(default_factory=list)  # redone by the next run


def completed(folder: Path, identity: dict, views: int) -> dict | None:
    """The object's render.json when it is complete for these settings (``identity``, with
    ``views`` videos), else None."""
    try:
        record = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("settings") != identity:
        return None
    if record.get("status") == "dropped":
        return record
    videos = record.get("videos")
    complete = isinstance(videos, list) and len(videos) == views
    if (
        record.get("status") == "rendered"
        and complete
        and all((folder / v).is_file() for v in videos)
    ):
        return record
    return None


def _outcome(job: Job, folder: Path, returncode: int) -> dict | Problem:
    """The render.json of a finished worker, or the Problem it ran into."""
    asset = job.asset
    file = str(asset.path)
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else "?"
        return Problem(asset.uid, file, "crashed", f"worker died of signal {-returncode} ({name})")
    if returncode == 0:
        record = completed(folder, job.identity, job.views)
        if record is not None:
            return record
        return Problem(asset.uid, file, "worker failed", "exited 0 without a complete render.json")
    try:
        error = json.loads((folder / ERROR_FILE).read_text(encoding="utf-8"))
        return Problem(asset.uid, file, error["reason"], error.get("detail", ""))
    except (OSError, json.JSONDecodeError, KeyError):
        log = (folder / LOG_FILE).read_text(encoding="utf-8", errors="replace")
        tail = " | ".join(line for line in log.strip().splitlines()[-3:])
        return Problem(asset.uid, file, "worker failed", f"exit status {returncode}: {tail}")


def _run_worker(job: Job, out: Path, command: Sequence[str]) -> dict | Problem:
    asset = job.asset
    folder = out / asset.uid
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RENDER_FILE).unlink(missing_ok=True)
    data = {"uid": asset.uid, "file": str(asset.path), "out": str(out), **job.payload}
    write_atomic(folder / JOB_FILE, json.dumps(data).encode())
    with open(folder / LOG_FILE, "wb") as log:
        done = subprocess.run(
            [*command, str(folder / JOB_FILE)], stdout=log, stderr=subprocess.STDOUT, check=False
        )
    return _outcome(job, folder, done.returncode)


def render_manifest(
    manifest: Path,
    out: Path,
    settings: RenderSettings,
    workers: int = 1,
    progress: bool = True,
    worker_command: Sequence[str] | None = None,
) -> RenderReport:
    """Render every asset of ``manifest`` into ``out``; see the module docstring."""
    require("curate 4d render", ["bpy"], "render")
    out = Path(out)
    assets, problems = read_manifest(manifest)
    settings = shared_threads(settings, workers)
    payload, identity = {"settings": settings.to_json()}, settings.identity()
    jobs = [Job(asset, payload, identity, settings.views) for asset in assets]
    command = list(worker_command or [sys.executable, "-m", WORKER_MODULE])
    report = render_jobs(jobs, out, workers, progress, command)
    report.failed[:0] = problems
    entered = len(assets) + len(problems)
    dropped = report.dropped + report.failed
    record_stage(out, "render", StageCount.of(entered, len(report.rendered), dropped))
    return report


def shared_threads(settings: RenderSettings, workers: int) -> RenderSettings:
    """The settings with the cores shared between the workers, unless a thread count is set."""
    if settings.threads:
        return settings
    return replace(settings, threads=max(1, (os.cpu_count() or 1) // workers))


def render_jobs(
    jobs: Sequence[Job], out: Path, workers: int, progress: bool, command: Sequence[str]
) -> RenderReport:
    """Each job's object rendered into OUT/<uid> by ``command`` JOB.json, ``workers`` at a
    time; the ones complete already are skipped. Records no funnel stage."""
    report = RenderReport()
    todo = []
    for job in jobs:
        record = completed(out / job.asset.uid, job.identity, job.views)
        if record is None:
            todo.append(job)
            continue
        report.skipped += 1
        _file(report, job.asset, record)
    with (
        progress_bar(disable=not progress) as bar,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
    ):
        task = bar.add_task("rendering objects", total=len(todo))
        futures = {pool.submit(_run_worker, job, out, command): job for job in todo}
        for future in as_completed(futures):
            _file(report, futures[future].asset, future.result())
            bar.advance(task)
    return report


def _file(report: RenderReport, asset: Asset, outcome: dict | Problem) -> None:
    if isinstance(outcome, Problem):
        report.failed.append(outcome)
    elif outcome["status"] == "dropped":
        report.dropped.append(Problem(asset.uid, str(asset.path), outcome["reason"]))
    else:
        report.rendered.append(asset.uid)
