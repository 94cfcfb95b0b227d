"""`vidbench curate 4d render MANIFEST --out DIR`: every asset of a manifest rendered to the
official 4D-Bench layout (OUT/<uid>/view_{k}_rgb_white_bg.mp4 + render.json), objects in
parallel processes (workers.py, one Blender per object), resumable per object.

An object whose render.json is complete for the same settings and the same asset (its file and the
files it references, asset_files.py: their size and time, else their bytes) is skipped, so a rerun
redoes only what failed, what was never done and what changed. A worker that fails (the asset cannot
load, has no mesh) or dies (a segfault inside Blender) is recorded with the uid, file and reason;
the others go on. Manifest entries that cannot be rendered (missing file, duplicate uid, malformed
line) are named apart: a rerun does not help them. Ctrl-C stops the workers within seconds; the
objects finished stay, and the funnel says how many were not done. Counts go to OUT/funnel.json
(stage "render").

`render_jobs` is the machinery without the manifest: any list of `RenderJob`s, each naming its
worker's input and the record that makes it complete (the Blender probe, fourd/probe, renders
through it with its own worker).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from vidbench.benchmarks.fourd.curate import funnel
from vidbench.benchmarks.fourd.curate.manifest import Asset, AssetProblem, read_manifest
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.curate.workers import (
    ERROR_FILE,
    LOG_FILE,
    FrameBar,
    RenderProcess,
    run_workers,
)
from vidbench.benchmarks.fourd.loader import RENDER_FILE
from vidbench.extras import require
from vidbench.progress import progress_bar

WORKER_MODULE = "vidbench.benchmarks.fourd.curate.workers"


@dataclass(frozen=True)
class RenderJob:
    """One object to render: its asset, what its worker reads besides the uid, file and output
    folder (``payload``, into JOB.json), what makes its render.json complete (the record's
    "settings" equal to ``identity`` and ``views`` videos present), and the most frames it may
    render (the progress bar's guess until its worker knows)."""

    asset: Asset
    payload: dict
    identity: dict
    views: int
    frames_at_most: int


@dataclass
class RenderReport:
    """What one render left in OUT: rendered uids, dropped and failed assets."""

    rendered: list[str] = field(default_factory=list)
    skipped: int = 0  # already complete before this run
    dropped: list[AssetProblem] = field(default_factory=list)  # no animation, no motion
    failed: list[AssetProblem] = field(default_factory=list)  # failed: a rerun tries again
    unusable: list[AssetProblem] = field(default_factory=list)  # manifest entries: fix them
    not_done: int = 0  # not rendered yet when the run was interrupted
    # object folders in OUT that this manifest does not name (an earlier or another manifest's):
    # `curate 4d qa` reads every object folder in OUT
    others: list[str] = field(default_factory=list)


def completed(folder: Path, job: RenderJob) -> dict | None:
    """The object's render.json when it is complete for the job's settings (``identity``, with
    ``views`` videos) and its asset file is the one rendered (a changed asset under the same
    uid is rendered again), else None."""
    try:
        record = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not there, not UTF-8, not JSON
        return None
    if not isinstance(record, dict) or record.get("settings") != job.identity:
        return None
    if not job.asset.matches(record.get("asset")):
        return None
    views = job.views
    if record.get("status") == "dropped":
        return record
    videos = record.get("videos")
    if not isinstance(videos, list) or len(videos) != views or record.get("status") != "rendered":
        return None
    return record if all((folder / v).is_file() for v in videos) else None


def _outcome(job: RenderJob, folder: Path, returncode: int) -> dict | AssetProblem:
    """The render.json of a finished worker, or the AssetProblem it ran into."""
    asset = job.asset
    file = str(asset.path)
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else "?"
        return AssetProblem(
            asset.uid, file, "crashed", f"worker died of signal {-returncode} ({name})"
        )
    if returncode == 0:
        record = completed(folder, job)
        if record is not None:
            return record
        return AssetProblem(
            asset.uid, file, "worker failed", "exited 0 without a complete render.json"
        )
    try:
        error = json.loads((folder / ERROR_FILE).read_text(encoding="utf-8"))
        return AssetProblem(asset.uid, file, error["reason"], error.get("detail", ""))
    except (OSError, ValueError, KeyError):
        log = (folder / LOG_FILE).read_text(encoding="utf-8", errors="replace")
        tail = " | ".join(line for line in log.strip().splitlines()[-3:])
        return AssetProblem(asset.uid, file, "worker failed", f"exit status {returncode}: {tail}")


def render_manifest(
    manifest: Path,
    out: Path,
    settings: RenderSettings,
    workers: int = 1,
    progress: bool = True,
    worker_command: Sequence[str] | None = None,
) -> RenderReport:
    """Render every asset of ``manifest`` into ``out``; see the module docstring. Ctrl-C:
    the funnel is written with what finished, then KeyboardInterrupt goes on."""
    require("curate 4d render", ["bpy"], "render")
    out = Path(out)
    funnel.refuse_other(out, "curate 4d render")
    assets, problems = read_manifest(manifest)
    settings = shared_threads(settings, workers)
    payload, identity = {"settings": settings.to_json()}, settings.identity()
    frames = settings.max_frames * settings.views
    jobs = [RenderJob(asset, payload, identity, settings.views, frames) for asset in assets]
    command = list(worker_command or [sys.executable, "-m", WORKER_MODULE])
    report = RenderReport(unusable=list(problems), others=others_in(out, assets, problems))
    try:
        render_jobs(jobs, out, workers, progress, command, report)
    finally:  # interrupted too: what finished is counted, and what did not is said
        entered = len(assets) + len(problems)
        dropped = report.dropped + report.failed + report.unusable
        count = funnel.stage_count(entered, len(report.rendered), dropped)
        notes = {OTHERS_NOTE: len(report.others)} if report.others else {}
        funnel.record(out, "render", replace(count, pending=report.not_done, notes=notes))
    return report


OTHERS_NOTE = "in OUT, not in the manifest"


def others_in(out: Path, assets: Sequence[Asset], problems: Sequence[AssetProblem]) -> list[str]:
    """The rendered object folders (a render.json) in OUT whose uid the manifest does not give."""
    named = {a.uid for a in assets} | {p.uid for p in problems}
    found = out.glob(f"*/{RENDER_FILE}") if out.is_dir() else ()
    return sorted(p.parent.name for p in found if p.parent.name not in named)


def shared_threads(settings: RenderSettings, workers: int) -> RenderSettings:
    """The settings with the cores shared between the workers, unless a thread count is set."""
    if settings.threads:
        return settings
    return replace(settings, threads=max(1, (os.cpu_count() or 1) // workers))


def render_jobs(
    jobs: Sequence[RenderJob],
    out: Path,
    workers: int,
    progress: bool,
    command: Sequence[str],
    report: RenderReport | None = None,
) -> RenderReport:
    """Each job's object rendered into OUT/<uid> by ``command`` JOB.json, ``workers`` at a
    time (workers.py), the ones complete already skipped; frames counted on a progress bar.
    Records no funnel stage. Ctrl-C: the workers are stopped, what finished is in the report
    (`not_done`: the rest), and KeyboardInterrupt goes on."""
    report = report or RenderReport()
    todo: dict[str, RenderJob] = {}
    for job in jobs:
        record = completed(out / job.asset.uid, job)
        if record is None:
            todo[job.asset.uid] = job
            continue
        report.skipped += 1
        _file(report, job.asset, record)
    runs = [
        RenderProcess(
            uid,
            out / uid,
            {"uid": uid, "file": str(job.asset.path), "out": str(out), **job.payload},
            job.frames_at_most,
        )
        for uid, job in todo.items()
    ]
    filed: set[str] = set()

    def done(run: RenderProcess, returncode: int) -> None:
        filed.add(run.uid)
        _file(report, todo[run.uid].asset, _outcome(todo[run.uid], run.folder, returncode))

    try:
        with progress_bar(disable=not progress) as bar:
            run_workers(runs, command, workers, done, FrameBar(bar, runs))
    except KeyboardInterrupt:
        for uid, job in todo.items():  # a worker stopped right after its last file finished
            record = None if uid in filed else completed(out / uid, job)
            if record is not None:
                filed.add(uid)
                _file(report, job.asset, record)
        report.not_done = len(todo) - len(filed)
        raise
    return report


def _file(report: RenderReport, asset: Asset, outcome: dict | AssetProblem) -> None:
    if isinstance(outcome, AssetProblem):
        report.failed.append(outcome)
    elif outcome["status"] == "dropped":
        report.dropped.append(AssetProblem(asset.uid, str(asset.path), outcome["reason"]))
    else:
        report.rendered.append(asset.uid)
