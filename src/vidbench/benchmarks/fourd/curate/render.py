"""`vidbench curate 4d render MANIFEST --out DIR`: every asset of a manifest rendered to the
official 4D-Bench layout (OUT/<uid>/view_{k}_rgb_white_bg.mp4 + render.json), objects in
parallel processes (worker.py, one Blender per object), resumable per object.

An object whose render.json is complete for the same settings is skipped, so a rerun redoes only
what failed or what was never done. A worker that fails (the asset cannot load, has no mesh) or
dies (a segfault inside Blender) is recorded with the uid, file and reason; the others go on.
Counts go to OUT/funnel.json (stage "render").
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
from vidbench.core.files import write_atomic
from vidbench.extras import require
from vidbench.progress import progress_bar

WORKER_MODULE = "vidbench.benchmarks.fourd.curate.worker"
JOB_FILE = ".job.json"
LOG_FILE = "worker.log"


@dataclass
class RenderReport:
    """What one `curate 4d render` left in OUT: rendered uids, dropped and failed assets."""

    rendered: list[str] = field(default_factory=list)
    skipped: int = 0  # already complete before this run
    dropped: list[Problem] = field(default_factory=list)  # no animation, no motion
    failed: list[Problem] = field(default_factory=list)  # redone by the next run


def completed(folder: Path, settings: RenderSettings) -> dict | None:
    """The object's render.json when it is complete for these settings, else None."""
    try:
        record = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
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
) -> dict | Problem:
    """The render.json of a finished worker, or the Problem it ran into."""
    file = str(asset.path)
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else "?"
        return Problem(asset.uid, file, "crashed", f"worker died of signal {-returncode} ({name})")
    if returncode == 0:
        record = completed(folder, settings)
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


def _run_worker(
    asset: Asset, out: Path, settings: RenderSettings, command: Sequence[str]
) -> dict | Problem:
    folder = out / asset.uid
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RENDER_FILE).unlink(missing_ok=True)
    job = {
        "uid": asset.uid,
        "file": str(asset.path),
        "out": str(out),
        "settings": settings.to_json(),
    }
    write_atomic(folder / JOB_FILE, json.dumps(job).encode())
    with open(folder / LOG_FILE, "wb") as log:
        done = subprocess.run(
            [*command, str(folder / JOB_FILE)], stdout=log, stderr=subprocess.STDOUT, check=False
        )
    return _outcome(asset, folder, done.returncode, settings)


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
    report = RenderReport(failed=list(problems))
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
    with (
        progress_bar(disable=not progress) as bar,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
    ):
        task = bar.add_task("rendering objects", total=len(todo))
        futures = {pool.submit(_run_worker, a, out, settings, command): a for a in todo}
        for future in as_completed(futures):
            _file(report, futures[future], future.result())
            bar.advance(task)
    entered = len(assets) + len(problems)
    dropped = report.dropped + report.failed
    record_stage(out, "render", StageCount.of(entered, len(report.rendered), dropped))
    return report


def _file(report: RenderReport, asset: Asset, outcome: dict | Problem) -> None:
    if isinstance(outcome, Problem):
        report.failed.append(outcome)
    elif outcome["status"] == "dropped":
        report.dropped.append(Problem(asset.uid, str(asset.path), outcome["reason"]))
    else:
        report.rendered.append(asset.uid)
