"""`vidbench synth 4d --renderer blender --out DIR`: the probe dataset, end to end.

1. plan (plan.py): each object's scene for its knob values, its questions with their evidence,
   captions, the glTF asset (DIR/assets/<uid>.glb) and its render job;
2. render (curate/render.py `render_jobs` with probe/worker.py): the views the questions need
   (or all 24), every frame, and Blender's visibility measure at the input frames; an object
   complete for the same settings is not rendered again, a failed one is named and the others
   go on (a rerun redoes it);
3. check (visibility.py): each question kept only when its evidence is visible in the input;
   the rest are dropped and counted with the reason;
4. write (output.py): the official layout, per-question knob fields, funnel, dataset card.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.benchmarks.fourd.curate.render import render_jobs
from vidbench.benchmarks.fourd.curate.workers import JOB_FILE, LOG_FILE, PROGRESS_FILE, RENDER_FILE
from vidbench.benchmarks.fourd.probe.output import KeptQuestion, write_dataset
from vidbench.benchmarks.fourd.probe.plan import (
    PlannedObject,
    ProbeSettings,
    plan_object,
    render_job,
    write_asset,
)
from vidbench.benchmarks.fourd.probe.report import ProbeReport
from vidbench.benchmarks.fourd.probe.visibility import judge
from vidbench.benchmarks.fourd.probe.worker import TIMING_FILE
from vidbench.benchmarks.fourd.synthetic.scene import check_visible
from vidbench.benchmarks.fourd.synthetic.writer import QA_DATA, VIDEOS
from vidbench.core.errors import ConfigError
from vidbench.extras import require
from vidbench.progress import progress_bar

WORKER_MODULE = "vidbench.benchmarks.fourd.probe.worker"


def build_probe(
    out: Path,
    settings: ProbeSettings,
    progress: bool = True,
    worker_command: list[str] | None = None,
) -> ProbeReport:
    """Write the probe dataset for ``settings`` into ``out``; see the module docstring."""
    require("synth 4d --renderer blender", ["bpy"], "render")
    try:
        check_visible(settings.frames)
    except ValueError as e:
        raise ConfigError(f"synth 4d: {e}") from None
    out = Path(out)
    planned = []
    with progress_bar(disable=not progress) as bar:
        task = bar.add_task("planning objects", total=settings.objects)
        for index in range(settings.objects):
            planned.append(plan_object(settings, index))
            bar.advance(task)
    jobs = [render_job(out, p, settings, write_asset(out, p, settings)) for p in planned]
    videos = out / QA_DATA / VIDEOS
    command = worker_command or [sys.executable, "-m", WORKER_MODULE]
    rendered = render_jobs(jobs, videos, settings.workers, progress, command)
    report = ProbeReport(objects=len(planned), failed=list(rendered.failed + rendered.dropped))
    done = set(rendered.rendered)
    kept: list[KeptQuestion] = []
    records: dict[str, dict] = {}
    for item in planned:
        uid = item.obj.scene.uid
        where = (QA_DATA / VIDEOS / uid).as_posix()
        report.missing += [
            AssetProblem(uid, where, f"{subtask}: no question", why)
            for subtask, why in item.missing.items()
        ]
        if uid not in done:
            continue
        folder = videos / uid
        records[uid] = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
        report.timings += _tidy(folder)
        report.rendered.append(uid)
        kept += _check(item, records[uid], settings, report, where)
    write_dataset(out, settings, planned, records, kept, report)
    return report


def _check(
    item: PlannedObject, record: dict, settings: ProbeSettings, report: ProbeReport, where: str
) -> list[KeptQuestion]:
    """The object's questions whose evidence Blender shows in the input; the others counted."""
    kept = []
    parts = item.obj.scene.parts
    for question in item.questions:
        verdict = judge(question.draft.evidence, parts, record["visibility"], settings.frames)
        report.generated += 1
        if verdict.kept:
            kept.append(KeptQuestion(item, question, verdict.least_visible))
            report.kept += 1
        else:
            reason = f"{question.subtask}: {verdict.reason}"
            report.dropped.append(
                AssetProblem(question.key, where, reason, question.draft.question)
            )
    return kept


def _tidy(folder: Path) -> list[dict]:
    """Remove what the worker leaves beside a complete render (its job, log, progress and timing:
    they name this machine's paths and times); returns the timing, if this run rendered it."""
    timing = []
    if (folder / TIMING_FILE).is_file():
        timing.append(json.loads((folder / TIMING_FILE).read_text(encoding="utf-8")))
    for name in (JOB_FILE, LOG_FILE, PROGRESS_FILE, TIMING_FILE):
        (folder / name).unlink(missing_ok=True)
    return timing
