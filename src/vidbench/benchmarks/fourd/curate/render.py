"""`vidbench curate 4d render MANIFEST --out DIR`: every asset of a manifest rendered to the
official 4D-Bench layout (OUT/<uid>/view_{k}_rgb_white_bg.mp4 + render.json), objects in
parallel processes (workers.py runs worker.py, one Blender per object), resumable per object.

An object whose render.json is complete for the same settings is skipped, so a rerun redoes only
what failed or what was never done. A worker that fails (the asset cannot load, has no mesh) or
dies (a segfault inside Blender) is recorded with the uid, file and reason; the others go on.
Manifest entries that cannot be rendered (missing file, duplicate uid, malformed line) are named
apart: a rerun does not help them. Ctrl-C stops the workers within seconds; the objects finished
stay, and the funnel says how many were not done. Counts go to OUT/funnel.json (stage "render").
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
from vidbench.benchmarks.fourd.curate.worker import ERROR_FILE, RENDER_FILE
from vidbench.benchmarks.fourd.curate.workers import LOG_FILE, FrameBar, Job, run_workers
from vidbench.extras import require
from vidbench.progress import progress_bar

WORKER_MODULE = "vidbench.benchmarks.fourd.curate.worker"


@dataclass
class RenderReport:
    """What one `curate 4d render` left in OUT: rendered uids, dropped and failed assets."""

    rendered: list[str] = field(default_factory=list)
    skipped: int = 0  # already complete before this run
    dropped: list[AssetProblem] = field(default_factory=list)  # no animation, no motion
    failed: list[AssetProblem] = field(
        default_factory=list
    )  # failed to render: a rerun tries again
    unusable: list[AssetProblem] = field(default_factory=list)  # manifest entries: fix the manifest
    not_done: int = 0  # not rendered yet when the run was interrupted


def completed(folder: Path, settings: RenderSettings) -> dict | None:
    """The object's render.json when it is complete for these settings, else None."""
    try:
        record = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not there, not UTF-8, not JSON
        return None
    if not isinstance(record, dict) or record.get("settings") != settings.identity():
        return None
    if record.get("status") == "dropped":
        return record
    videos = record.get("videos")
    complete = isinstance(videos, list) and len(videos) == settings.views
    if (
        record.get("status") == "rendered"
        and complete
        and all((folder / v).is_file() for v in videos)
    ):
        return record
    return None


def _outcome(
    asset: Asset, folder: Path, returncode: int, settings: RenderSettings
) -> dict | AssetProblem:
    """The render.json of a finished worker, or the AssetProblem it ran into."""
    file = str(asset.path)
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else "?"
        return AssetProblem(
            asset.uid, file, "crashed", f"worker died of signal {-returncode} ({name})"
        )
    if returncode == 0:
        record = completed(folder, settings)
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


def _job(asset: Asset, out: Path, settings: RenderSettings) -> Job:
    spec = {
        "uid": asset.uid,
        "file": str(asset.path),
        "out": str(out),
        "settings": settings.to_json(),
    }
    return Job(asset.uid, out / asset.uid, spec, settings.max_frames * settings.views)


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
    assets, problems = read_manifest(manifest)
    report = RenderReport(unusable=list(problems))
    if not settings.threads:  # share the cores between the workers
        settings = replace(settings, threads=max(1, (os.cpu_count() or 1) // workers))
    command = list(worker_command or [sys.executable, "-m", WORKER_MODULE])
    todo = []
    for asset in assets:
        record = completed(out / asset.uid, settings)
        if record is None:
            todo.append(asset)
            continue
        report.skipped += 1
        _file(report, asset, record)
    jobs = [_job(a, out, settings) for a in todo]
    by_uid = {a.uid: a for a in todo}

    filed: set[str] = set()

    def done(job: Job, returncode: int) -> None:
        filed.add(job.uid)
        _file(report, by_uid[job.uid], _outcome(by_uid[job.uid], job.folder, returncode, settings))

    try:
        with progress_bar(disable=not progress) as bar:
            run_workers(jobs, command, workers, done, FrameBar(bar, jobs))
    except KeyboardInterrupt:
        for asset in todo:  # a worker stopped right after its last file counts as finished
            record = completed(out / asset.uid, settings) if asset.uid not in filed else None
            if record is not None:
                _file(report, asset, record)
        raise
    finally:  # interrupted too: what finished is counted, and what did not is said
        finished = len(report.rendered) + len(report.dropped) + len(report.failed)
        report.not_done = len(assets) - finished
        entered = len(assets) + len(problems)
        dropped = report.dropped + report.failed + report.unusable
        count = funnel.stage_count(entered, len(report.rendered), dropped)
        funnel.record(out, "render", replace(count, pending=report.not_done))
    return report


def _file(report: RenderReport, asset: Asset, outcome: dict | AssetProblem) -> None:
    if isinstance(outcome, AssetProblem):
        report.failed.append(outcome)
    elif outcome["status"] == "dropped":
        report.dropped.append(AssetProblem(asset.uid, str(asset.path), outcome["reason"]))
    else:
        report.rendered.append(asset.uid)
