"""Write REPORT_DIR: a static report that opens from file:// offline.

REPORT_DIR/
  index.html, app.js, app.css   the page (package data, copied as they are; no CDN)
  data/meta.js                  runs, tables, figures, messages, filter values, and the index:
                                each sample's group and outcome in each run (what the filters need)
  data/samples-NNN.js           the sample rows, CHUNK_SIZE per file, loaded as pages need them
  data/search-NNN.js            the text the search looks in, SEARCH_CHUNKS chunks' worth per
                                file, loaded at the first search
  data/prompts-NNN.js           the exact prompts, PROMPTS_PER_FILE per file, loaded when a
                                sample's "Prompt" is opened
  data/judge-NNN.js             the judge's calls (prompt and reply of every attempt),
                                JUDGE_CALLS_PER_FILE per file, loaded when a sample's "Judge"
                                is opened
  thumbs/                       the frames the models saw, as small JPEGs
  videos/                       the source videos (links or copies; `--videos`)
  figures/                      report/figures.py's bar and curve figures, when they apply
  audits/                       the pages of `vidbench audit` run on these runs (copied)

Browsers refuse fetch() of local files from a file:// page, so the data are JavaScript files
that hand their contents to the page's `vidbenchView` object, loaded by <script> tags the page
adds when it needs them: opening a report of any size loads meta.js and the chunks of its first
page. The rows are written a chunk at a time, read again from each run's samples.jsonl, so the
report's memory does not grow with the number of samples beyond the index.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import cast

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.files import Json, remove_temporaries, write_atomic
from vidbench.core.records import MediaRef, Sample
from vidbench.media.cache import FrameCache
from vidbench.media.spec import FrameSpec
from vidbench.progress import progress_bar
from vidbench.report.figures import FigureSpec
from vidbench.report.results_dir import RESULTS_FILE, RUN_FILE, SAMPLES_FILE
from vidbench.report.schema import Results
from vidbench.runner.lock import LOCK_FILE, results_lock
from vidbench.runner.store import Store
from vidbench.view.collect import RunData, owner_of
from vidbench.view.samples import (
    OUTCOMES,
    VIDEO_CHANGED,
    PromptRef,
    SampleMedia,
    SampleView,
    Written,
    judge_attempt,
    sample_order,
    sample_rows,
    search_text,
)
from vidbench.view.tables import table_data
from vidbench.view.thumbs import THUMBS_DIR, Strip, StripIndex, Thumbnailer
from vidbench.view.videos import VideoMode, VideoPlacer, remove_unplaced, video_digests

STATIC_FILES = ("index.html", "app.js", "app.css")
DATA_DIR = "data"
CHUNK_SIZE = 500
SEARCH_CHUNKS = 10  # sample chunks a search file covers
PROMPTS_PER_FILE = 500
JUDGE_CALLS_PER_FILE = 200  # a judge's prompt holds the question, answers and rules
DATA_FILES = ("samples-*.js", "search-*.js", "prompts-*.js", "judge-*.js")
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


def _script(call: str, *args: object) -> bytes:
    """`call(arg, ...);` with each argument as JSON: a JavaScript literal, so the data are
    never evaluated as anything else."""
    text = ",".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    return f"{call}({text});\n".encode()


# what a sample's frames and videos depend on: samples (and runs) that share it share them
MediaKey = tuple[tuple[tuple[int, str], ...], float | None, float | None, FrameSpec, str]


def _media_key(media: MediaRef, spec: FrameSpec, cache: FrameCache) -> MediaKey:
    videos = tuple(sorted((view, str(path)) for view, path in media.videos.items()))
    return (videos, media.start_s, media.end_s, spec, str(cache.root))


def _media(
    runs: Sequence[RunData], options: ViewOptions, index: StripIndex | None
) -> dict[tuple[int, str], SampleMedia]:
    """Frames and videos of every sample of every run whose task and data are there: made once
    for the samples that share them (4D-Bench's five questions about one object; the same
    sample in several runs), in a thread pool (decoding and image work release the GIL), and
    not at all for the strips the report folder already holds (thumbs.StripIndex)."""
    placer = VideoPlacer(options.out, options.videos)
    caches: dict[str, FrameCache] = {}  # one per folder: its digests are memoised per object
    wanted: dict[tuple[int, str], MediaKey] = {}
    work: dict[MediaKey, tuple[MediaRef, FrameSpec, FrameCache, Thumbnailer | None]] = {}
    for number, run in enumerate(runs):
        if run.task is None:
            continue
        cache_dir = run.config.cache_dir if run.config else None
        cache = FrameCache(Path(cache_dir) if cache_dir else None)
        cache = caches.setdefault(str(cache.root), cache)
        thumbs = Thumbnailer(options.out, cache, index) if index is not None else None
        spec = run.task.frame_spec
        for sample_id in run.index():
            sample = run.samples.get(sample_id)
            if sample is None:
                continue
            key = _media_key(sample.media, spec, cache)
            wanted[(number, sample_id)] = key
            work.setdefault(key, (sample.media, spec, cache, thumbs))

    def one(job: tuple[MediaRef, FrameSpec, FrameCache, Thumbnailer | None]) -> SampleMedia:
        media, spec, cache, thumbs = job
        found: SampleMedia = {"videos": placer.videos(media, spec)}
        strip = thumbs.strip(media, spec) if thumbs is not None else None
        if strip is not None:  # the page needs no digests
            found["frames"] = cast(Strip, {k: v for k, v in strip.items() if k != "sources"})
        if strip is not None and "sources" in strip:  # known when its frames were read
            found["sources"] = {int(view): digest for view, digest in strip["sources"].items()}
        else:
            found["sources"] = video_digests(media, spec, cache)
        return found

    made: dict[MediaKey, SampleMedia] = {}
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


def _audits(runs: Sequence[RunData], out: Path) -> list[dict[str, Json]]:
    """The audit pages recorded in the runs (audit/link.py), copied into AUDITS_DIR: each opens
    alone, so the report keeps them wherever it is moved or served."""
    from vidbench.audit.link import audit_pages, audited_runs

    for stale in (out / AUDITS_DIR).glob("audit-*.html"):
        stale.unlink()
    found: list[dict[str, Json]] = []
    for k, page in enumerate(audit_pages([run.path for run in runs])):
        write_atomic(out / AUDITS_DIR / f"audit-{k}.html", page.read_bytes())
        href = f"{AUDITS_DIR}/audit-{k}.html"
        found.append({"href": href, "folder": str(page.parent), "runs": audited_runs(page)})
    return found


def _copy_static(out: Path) -> None:
    static = resources.files("vidbench.view") / "static"
    for name in STATIC_FILES:
        write_atomic(out / name, (static / name).read_bytes())


def is_report(folder: Path) -> bool:
    """`folder` holds a report `vidbench view` wrote (given as a run by mistake: skipped)."""
    return (folder / DATA_DIR / "meta.js").is_file() and (folder / STATIC_FILES[0]).is_file()


def _check_target(out: Path) -> None:
    """REPORT_DIR is new, empty, or a report written before (replaced in place): never a
    folder of other files, whose index.html or data/ the report would overwrite."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a folder")
    others = out.is_dir() and any(p.name != LOCK_FILE for p in out.iterdir())
    if others and not (out / DATA_DIR / "meta.js").is_file():
        run = [name for name in (RESULTS_FILE, SAMPLES_FILE, RUN_FILE) if (out / name).is_file()]
        what = f"a run's results directory (it holds {run[0]})" if run else "a folder"
        raise ConfigError(f"--out {out}: {what} with other files in it; give a new folder")


def _file(kind: str, k: int) -> str:
    return f"{kind}-{k:03d}.js"


class _Batches:
    """Items written to numbered data files (`kind`-NNN.js), `size` a file, each file a
    `call(k, items)` script; `add` says where the item will be: [file, position]."""

    def __init__(self, data: Path, kind: str, call: str, size: int) -> None:
        self.data, self.kind, self.call, self.size = data, kind, call, size
        self.items: list[object] = []
        self.files = 0

    def add(self, item: object) -> PromptRef:
        where = (self.files, len(self.items))
        self.items.append(item)
        if len(self.items) == self.size:
            self.flush()
        return where

    def flush(self) -> None:
        if self.items:
            script = _script(self.call, self.files, self.items)
            write_atomic(self.data / _file(self.kind, self.files), script)
            self.files += 1
            self.items = []


def _write_prompts(runs: Sequence[RunData], data: Path) -> dict[str, PromptRef]:
    """The exact prompts of the runs' rows into prompt files, each text once; where each is, by
    prompt hash. The stores are read a row at a time."""
    wanted = {info.prompt_hash for run in runs for info in run.index().values()}
    found: dict[str, PromptRef] = {}
    files = _Batches(data, "prompts", "vidbenchView.prompts", PROMPTS_PER_FILE)
    for run in runs:
        try:
            store = Store.read_only(run.path)
        except VidbenchError:  # none, or not a database: collect.py noted it
            continue
        with store:
            try:
                for prompt_hash, prompt in store.prompts():
                    if prompt_hash in wanted and prompt_hash not in found:
                        found[prompt_hash] = files.add(prompt)
            except sqlite3.Error:  # an older or damaged store: collect.py noted it
                continue
    files.flush()
    return found


def _write_judge_calls(
    runs: Sequence[RunData], data: Path, messages: list[str]
) -> list[dict[str, list[PromptRef]]]:
    """Every judge call about the runs' samples (prompt and reply of each attempt) into judge
    files; where each run's are, by sample id. The stores are read a row at a time."""
    files = _Batches(data, "judge", "vidbenchView.judge", JUDGE_CALLS_PER_FILE)
    found: list[dict[str, list[PromptRef]]] = []
    for run in runs:
        found.append({})
        try:
            store = Store.read_only(run.path)
        except VidbenchError:  # none, or not a database: collect.py noted it
            continue
        ids = set(run.index())
        with store:
            try:
                for call in store.calls():
                    owner = owner_of(call.item, ids)
                    if owner is not None:
                        found[-1].setdefault(owner, []).append(files.add(judge_attempt(call)))
            except sqlite3.Error as e:  # an older or damaged store
                messages.append(f"{run.path}: judge calls not readable ({e}): not all shown")
    files.flush()
    return found


class _Index:
    """What the page filters by, a list per field with an item per sample in the report's order
    (the samples themselves are in the chunks): each sample's group and its outcome in each run,
    as positions in the lists of groups and outcomes (-1: none); and each run's outcomes and
    answers cut at the token limit, counted."""

    def __init__(self, runs: int) -> None:
        self.groups: list[str] = []
        self.outcomes: list[list[int]] = [[] for _ in range(runs)]
        self.counts = [dict.fromkeys(OUTCOMES, 0) for _ in range(runs)]
        self.truncated = [0] * runs
        self.video_changed = [0] * runs
        self._outcome = {name: k for k, name in enumerate(OUTCOMES)}

    def add(self, row: SampleView) -> None:
        self.groups.append(row["group"])
        for k, entry in enumerate(row["runs"]):
            self.outcomes[k].append(-1 if entry is None else self._outcome[entry["outcome"]])
            if entry is not None:
                self.counts[k][entry["outcome"]] += 1
                self.truncated[k] += entry["truncated"]
                self.video_changed[k] += "video_changed" in entry

    def group_names(self) -> list[str]:
        return sorted(set(self.groups) - {""})

    def data(self) -> dict[str, Json]:
        position = {name: k for k, name in enumerate(self.group_names())}
        groups: list[Json] = [position.get(g, -1) for g in self.groups]
        return {"group": groups, "outcome": cast(list[Json], self.outcomes)}


def write_report(runs: Sequence[RunData], options: ViewOptions) -> Built:
    """Write the report of `runs` into `options.out`, held by this process alone (the folder's
    lock, runner/lock.py: a second view into it stops at once, saying whose it is), after
    removing what a view killed half-way left there (`_remove_leftovers`)."""
    _check_target(options.out)
    with results_lock(options.out, kind="report folder"):
        _remove_leftovers(options.out)
        return _write_report(runs, options)


def _remove_leftovers(out: Path) -> None:
    """The temporary files a view killed half-way left in the report's folders: the videos it
    was placing, the data, thumbnails, figures and audit pages it was writing (no live view
    writes them: this one holds the folder)."""
    folders = [out / DATA_DIR, out / FIGURES_DIR, out / AUDITS_DIR, out / THUMBS_DIR]
    folders += [p for p in (out / THUMBS_DIR).glob("*") if p.is_dir()]
    for folder in folders:
        remove_temporaries(folder)
    remove_unplaced(out)


def _write_report(runs: Sequence[RunData], options: ViewOptions) -> Built:
    out = options.out
    messages = [m for run in runs for m in run.messages]
    thumbs = StripIndex.load(out) if options.thumbnails else None
    media = _media(runs, options, thumbs)

    def media_of(index: int, sample: Sample) -> SampleMedia:
        return media.get((index, sample.id), SampleMedia())

    data = out / DATA_DIR
    # until the report is written, its page says so (and a second try knows the folder)
    write_atomic(data / "meta.js", _script("vidbenchView.meta", _unfinished()))
    for pattern in DATA_FILES:  # the files of an earlier report
        for stale in data.glob(pattern):
            stale.unlink()
    written = Written(_write_prompts(runs, data), _write_judge_calls(runs, data, messages))
    order, disagreements = sample_order(runs)
    size = max(1, options.chunk_size)
    search = _Batches(data, "search", "vidbenchView.search", size * SEARCH_CHUNKS)
    index = _Index(len(runs))
    chunks = 0
    for start in range(0, len(order), size):
        rows = sample_rows(runs, order[start : start + size], media_of, options.groups, written)
        write_atomic(data / _file("samples", chunks), _script("vidbenchView.add", chunks, rows))
        chunks += 1
        for row in rows:
            index.add(row)
            search.add(search_text(row))
    search.flush()
    messages += [
        f"{run.path}: {changed} sample(s) marked 'video edited': {VIDEO_CHANGED}; run the infer "
        "stage again to ask about the videos as they are now"
        for run, changed in zip(runs, index.video_changed, strict=True)
        if changed
    ]
    results = [r.results for r in runs if r.results]
    folders = [r.path for r in runs if r.results]
    meta = {
        "runs": [
            {
                "label": run.label,
                "path": str(run.path),
                "task": _task(run),
                "n": run.rows_read,
                "results_n": run.results.n if run.results else None,
                "outcomes": index.counts[i],
                "truncated": index.truncated[i],  # answers cut at the token limit
            }
            for i, run in enumerate(runs)
        ],
        "tables": table_data(results, folders),
        # of the runs with results only: a folder without (given by mistake) dropped them all
        "figures": _figures(results, folders, options, messages),
        "audits": _audits(runs, out),
        "messages": messages,
        "groups": index.group_names(),
        "outcomes": list(OUTCOMES),
        "chunks": chunks,
        "chunk_size": size,
        "search_files": search.files,
        "search_size": search.size,
        "total": len(order),
        "disagreements": disagreements,  # the first rows of the report's order
        "index": index.data(),
    }
    write_atomic(data / "meta.js", _script("vidbenchView.meta", meta))
    _copy_static(out)
    made, reused = (thumbs.made, thumbs.reused) if thumbs is not None else (0, 0)
    return Built(out / "index.html", len(order), messages, made, reused)


def _unfinished() -> dict[str, Json]:
    """The meta.js of a report being written: no samples, and a message saying so."""
    message = "this report is being written, or its writing stopped: run vidbench view again"
    return {
        "runs": [], "tables": [], "figures": [], "audits": [], "messages": [message],
        "groups": [], "outcomes": list(OUTCOMES), "chunks": 0, "chunk_size": 1,
        "search_files": 0, "search_size": 1, "total": 0, "disagreements": 0,
        "index": {"group": [], "outcome": []},
    }  # fmt: skip


def _task(run: RunData) -> str | None:
    if run.results is not None:
        return run.results.task
    return run.config.task if run.config else None
