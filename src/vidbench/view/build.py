"""Write REPORT_DIR: a static report that opens from file:// offline.

REPORT_DIR/
  index.html, app.js, app.css   the page (package data, copied as they are; no CDN)
  data/meta.js                  runs, tables, figures, messages, filter values, chunk count
  data/samples-NNN.js           the sample rows, CHUNK_SIZE per file
  thumbs/                       the frames the models saw, as small JPEGs
  videos/                       the source videos (links or copies; `--videos`)
  figures/                      report/figures.py's bar and curve figures, when they apply
  audits/                       the pages of `vidbench audit` run on these runs (copied)

Browsers refuse fetch() of local files from a file:// page, so the data are JavaScript files
that hand their rows to the page's `vidbenchView` object, loaded by <script> tags; the page
shows them a page at a time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.files import write_atomic
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.spec import FrameSpec
from vidbench.progress import progress_bar
from vidbench.report.figures import FigureSpec
from vidbench.report.schema import Results
from vidbench.view.collect import RunData
from vidbench.view.samples import OUTCOMES, sample_rows
from vidbench.view.tables import table_data
from vidbench.view.thumbs import StripIndex, Thumbnailer
from vidbench.view.videos import VideoMode, VideoPlacer

STATIC_FILES = ("index.html", "app.js", "app.css")
DATA_DIR = "data"
CHUNK_SIZE = 500
FIGURES_DIR = "figures"
AUDITS_DIR = "audits"


@dataclass(frozen=True)
class ViewOptions:
    out: Path
    videos: VideoMode = "link"
    thumbnails: bool = True
    # threads making thumbnails and placing videos (decoding and image work release the GIL)
    workers: int = field(default_factory=lambda: min(8, (os.cpu_count() or 1) + 2))
    chunk_size: int = CHUNK_SIZE
    figures: Sequence[FigureSpec] = ()  # the benchmarks' own figures, beside bars and curves
    groups: Sequence[str] = ()  # record fields samples are grouped by (Benchmark.sample_groups)
    progress: bool = False  # a progress bar on stderr


@dataclass
class Built:
    """What was written: the page, how many samples, and what could not be shown."""

    index: Path
    samples: int
    messages: list[str] = field(default_factory=list)
    strips_made: int = 0  # samples' frames made into thumbnails now (shared ones once)
    strips_reused: int = 0  # samples' frames the report folder had from before


def _script(call: str, *args: Any) -> bytes:
    """`call(arg, ...);` with each argument as JSON: a JavaScript literal, so the data are
    never evaluated as anything else."""
    text = ",".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    return f"{call}({text});\n".encode()


# what a sample's frames and videos depend on: samples (and runs) that share it share them
MediaKey = tuple[Any, ...]


def _media_key(media: MediaRef, spec: FrameSpec, cache: FrameCache) -> MediaKey:
    videos = tuple(sorted((view, str(path)) for view, path in media.videos.items()))
    return (videos, media.start_s, media.end_s, spec, str(cache.root))


def _media(
    runs: Sequence[RunData], options: ViewOptions, index: StripIndex | None
) -> dict[tuple[int, str], dict[str, Any]]:
    """Frames and videos of every sample of every run whose task and data are there: made once
    for the samples that share them (4D-Bench's five questions about one object; the same
    sample in several runs), in a thread pool (decoding and image work release the GIL), and
    not at all for the strips the report folder already holds (thumbs.StripIndex)."""
    placer = VideoPlacer(options.out, options.videos)
    caches: dict[str, FrameCache] = {}  # one per folder: its digests are memoised per object
    wanted: dict[tuple[int, str], MediaKey] = {}
    work: dict[MediaKey, tuple[MediaRef, FrameSpec, Thumbnailer | None]] = {}
    for number, run in enumerate(runs):
        if run.task is None:
            continue
        cache_dir = run.config.cache_dir if run.config else None
        cache = FrameCache(Path(cache_dir) if cache_dir else None)
        cache = caches.setdefault(str(cache.root), cache)
        thumbs = Thumbnailer(options.out, cache, index) if index is not None else None
        spec = run.task.frame_spec
        for sample_id in dict.fromkeys(row.id for row in run.records):
            sample = run.samples.get(sample_id)
            if sample is None:
                continue
            key = _media_key(sample.media, spec, cache)
            wanted[(number, sample_id)] = key
            work.setdefault(key, (sample.media, spec, thumbs))

    def one(job: tuple[MediaRef, FrameSpec, Thumbnailer | None]) -> dict[str, Any]:
        media, spec, thumbs = job
        found: dict[str, Any] = {"videos": placer.videos(media, spec)}
        if thumbs is not None:
            found["frames"] = thumbs.strip(media, spec)
        return found

    made: dict[MediaKey, dict[str, Any]] = {}
    what = "thumbnails and videos" if index is not None else "videos"
    with (
        progress_bar(disable=not options.progress or not work) as bar,
        ThreadPoolExecutor(max(1, options.workers)) as pool,
    ):
        task = bar.add_task(what, total=len(work))
        futures = {pool.submit(one, job): key for key, job in work.items()}
        for future in as_completed(futures):
            made[futures[future]] = future.result()
            bar.advance(task)
    if index is not None:
        index.save()
    return {job: made[key] for job, key in wanted.items()}


def _figures(
    results: Sequence[Results], runs: Sequence[Path], options: ViewOptions, messages: list[str]
) -> list[str]:
    """report/figures.py's figures (PNG shown, SVG beside it) when all runs share one table."""
    from vidbench.report.combine import groups
    from vidbench.report.figures import all_figures

    if not results or len(groups(results)) != 1:
        return []
    try:
        written = all_figures(results, options.out / FIGURES_DIR, options.figures, None, runs)
    except (VidbenchError, ValueError, KeyError) as e:
        messages.append(f"figures not drawn: {e}")
        return []
    return [f"{FIGURES_DIR}/{p.name}" for p in written if p.suffix == ".png"]


def _audits(runs: Sequence[RunData], out: Path) -> list[dict[str, Any]]:
    """The audit pages recorded in the runs (audit/link.py), copied into AUDITS_DIR: each opens
    alone, so the report keeps them wherever it is moved or served."""
    from vidbench.audit.link import audit_pages, audited_runs

    for stale in (out / AUDITS_DIR).glob("audit-*.html"):
        stale.unlink()
    found = []
    for k, page in enumerate(audit_pages([run.path for run in runs])):
        write_atomic(out / AUDITS_DIR / f"audit-{k}.html", page.read_bytes())
        href = f"{AUDITS_DIR}/audit-{k}.html"
        found.append({"href": href, "folder": str(page.parent), "runs": audited_runs(page)})
    return found


def _copy_static(out: Path) -> None:
    static = resources.files("vidbench.view") / "static"
    for name in STATIC_FILES:
        write_atomic(out / name, (static / name).read_bytes())


def _check_target(out: Path) -> None:
    """REPORT_DIR is new, empty, or a report written before (replaced in place): never a
    folder of other files, whose index.html or data/ the report would overwrite."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / DATA_DIR / "meta.js").is_file():
        raise ConfigError(f"--out {out}: a folder with other files in it; give a new folder")


def write_report(runs: Sequence[RunData], options: ViewOptions) -> Built:
    out = options.out
    _check_target(out)
    out.mkdir(parents=True, exist_ok=True)
    messages = [m for run in runs for m in run.messages]
    index = StripIndex.load(out) if options.thumbnails else None
    media = _media(runs, options, index)
    rows = sample_rows(
        runs, lambda index, sample: media.get((index, sample.id), {}), options.groups
    )
    results = [r.results for r in runs if r.results]
    data = out / DATA_DIR
    for stale in data.glob("samples-*.js"):  # chunks of an earlier, larger report
        stale.unlink()
    chunks = [rows[i : i + options.chunk_size] for i in range(0, len(rows), options.chunk_size)]
    for k, chunk in enumerate(chunks):
        write_atomic(data / f"samples-{k:03d}.js", _script("vidbenchView.add", k, chunk))
    meta = {
        "runs": [
            {
                "label": run.label,
                "path": str(run.path),
                "task": _task(run),
                "n": len(run.records),
                "results_n": run.results.n if run.results else None,
                "outcomes": {o: sum(1 for r in rows if _outcome(r, i) == o) for o in OUTCOMES},
            }
            for i, run in enumerate(runs)
        ],
        "tables": table_data(results),
        "figures": _figures(results, [r.path for r in runs], options, messages),
        "audits": _audits(runs, out),
        "messages": messages,
        "groups": sorted({str(r["group"]) for r in rows if r["group"]}),
        "outcomes": list(OUTCOMES),
        "chunks": len(chunks),
        "total": len(rows),
    }
    write_atomic(data / "meta.js", _script("vidbenchView.meta", meta))
    _copy_static(out)
    made, reused = (index.made, index.reused) if index is not None else (0, 0)
    return Built(out / "index.html", len(rows), messages, made, reused)


def _task(run: RunData) -> str | None:
    if run.results is not None:
        return run.results.task
    return run.config.task if run.config else None


def _outcome(row: dict[str, Any], index: int) -> str | None:
    entry = row["runs"][index]
    return None if entry is None else entry["outcome"]
