"""The objects to write questions about, from either folder layout.

- official: a data folder (or release root) holding `4d_object_multi_view_videos/<uid>/`, as the
  4D-Bench release and `vidbench synth 4d` lay it out;
- rendered: the output folder of `curate 4d render` (part 1), `<uid>/view_{k}_rgb_white_bg.mp4`
  with `render.json`.

In either, `motion.jsonl` and `quality.jsonl` beside the object folders are read when `curate 4d
motion` and `curate 4d quality predict` wrote them there (their default).

An object is skipped, with its reason, when its render was started and not finished (a job file
and no render.json: failed, or stopped), when part 1 dropped it (render.json status `dropped`, a
`motion.jsonl` beside the object folders saying it does not move or its video is unreadable, a
quality label other than "high quality", or none where `quality.jsonl` exists), when its
motion.jsonl or quality.jsonl record judged an earlier render of it (the object rendered again
since: "out of date"), or when a view the FrameSpec needs is missing; the others go on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.curate.motion_filter import MOTION_FILE, render_digest
from vidbench.benchmarks.fourd.curate.quality import KEEP
from vidbench.benchmarks.fourd.curate.workers import ERROR_FILE, JOB_FILE
from vidbench.core.errors import ConfigError
from vidbench.core.files import json_lines
from vidbench.core.records import MediaRef
from vidbench.media.spec import FrameSpec

QUALITY_FILE = "quality.jsonl"
NOT_ASSESSED = "not assessed"  # quality.jsonl has no label of it (unreadable, or not in it)
RENDER_FILE = "render.json"


@dataclass(frozen=True)
class QAObject:
    uid: str
    media: MediaRef  # view id -> video path, only the views that exist


@dataclass(frozen=True)
class Skipped:
    uid: str
    reason: str  # short, countable: "missing views", "render dropped", "quality: ..."
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"uid": self.uid, "reason": self.reason, "detail": self.detail}


@dataclass
class ObjectListing:
    video_root: Path  # the folder holding <uid>/view_K_rgb_white_bg.mp4
    layout: str  # official | rendered
    objects: list[QAObject]
    skipped: list[Skipped]


def video_root(data: Path) -> tuple[Path, str]:
    """The folder of per-object view folders and the layout it was found in."""
    data = Path(data)
    candidates = [data / fourd.VIDEO_DIR]
    candidates += [data / folder / fourd.VIDEO_DIR for folder in fourd.RELEASE_FOLDERS.values()]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate, "official"
    if data.is_dir() and any(
        p.is_dir() and any(p.glob("view_*_rgb_white_bg.mp4")) for p in data.iterdir()
    ):
        return data, "rendered"
    raise ConfigError(
        f"{data}: no {fourd.VIDEO_DIR}/ (official layout) and no <uid>/view_K_rgb_white_bg.mp4 "
        "folders (the output of `curate 4d render`) found"
    )


def _records(path: Path) -> dict[str, dict]:
    """uid -> its record in a motion.jsonl or quality.jsonl; empty when there is none (part 1
    writes them atomically; a bad line names no uid)."""
    if not path.is_file():
        return {}
    found = (line.value for line in json_lines(path))
    return {str(r["uid"]): r for r in found if isinstance(r, dict) and "uid" in r}


def _quality_label(record: dict | None) -> str:
    label = record.get("label") if record is not None else None
    return str(label) if label is not None else NOT_ASSESSED


def _motion_dropped(record: dict | None) -> str | None:
    """Why `curate 4d motion` dropped the object (no motion, an unreadable or missing view);
    None when it did not, or did not look at it."""
    if record is None:
        return None
    if record.get("error") is not None:
        return f"unreadable video: {record['error']}"
    return "no motion" if record.get("moving") is False else None


STAGE_COMMANDS = {"motion": "curate 4d motion", "quality": "curate 4d quality predict"}


def _stale(folder: Path, records: dict[str, dict | None], root: Path) -> Skipped | None:
    """The object skipped when its motion.jsonl or quality.jsonl record (by stage) judged an
    earlier render of it (rendered again since: the hash of its render.json differs); a record
    without that hash (an older vidbench's) is taken as current."""
    current = render_digest(folder).get("render")
    for stage, record in records.items():
        if record is not None and "render" in record and record["render"] != current:
            detail = (
                f"{root / f'{stage}.jsonl'} judged an earlier render: run "
                f"`{STAGE_COMMANDS[stage]}` again"
            )
            return Skipped(folder.name, f"{stage}: out of date", detail)
    return None


def _render_unfinished(folder: Path) -> Skipped | None:
    """The object skipped when `curate 4d render` started it (its job file is there) and left
    no render.json: the render failed (error.json says why) or was stopped, and the views there
    are a part of this render or an earlier render's (render.json goes first when one starts)."""
    if (folder / RENDER_FILE).is_file() or not (folder / JOB_FILE).is_file():
        return None
    try:
        error = json.loads((folder / ERROR_FILE).read_text(encoding="utf-8"))
        why = f"it failed: {error['reason']}"
    except (OSError, ValueError, TypeError, KeyError):  # none: stopped, or the worker died
        why = "it was stopped or its worker died"
    detail = f"no {RENDER_FILE}, {why}; run `curate 4d render` again"
    return Skipped(folder.name, "render not complete", detail)


def _render_dropped(folder: Path) -> str | None:
    try:
        record = json.loads((folder / RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not there, not UTF-8, not JSON
        return None
    if isinstance(record, dict) and record.get("status") == "dropped":
        return str(record.get("reason", "dropped"))
    return None


def list_objects(data: Path, spec: FrameSpec) -> ObjectListing:
    """Every object folder (sorted by uid), each with the views that exist; skipped ones with
    their reasons."""
    root, layout = video_root(data)
    quality = _records(root / QUALITY_FILE)
    motion = _records(root / MOTION_FILE)
    objects: list[QAObject] = []
    skipped: list[Skipped] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        uid = folder.name
        dropped = _render_dropped(folder)
        if dropped is not None:
            skipped.append(Skipped(uid, "render dropped", dropped))
            continue
        unfinished = _render_unfinished(folder)
        if unfinished is not None:
            skipped.append(unfinished)
            continue
        stale = _stale(folder, {"motion": motion.get(uid), "quality": quality.get(uid)}, root)
        if stale is not None:
            skipped.append(stale)
            continue
        if (why := _motion_dropped(motion.get(uid))) is not None:
            skipped.append(Skipped(uid, "motion dropped", why))
            continue
        if quality and (label := _quality_label(quality.get(uid))) != KEEP:
            detail = "" if uid in quality else f"not in {root / QUALITY_FILE}"
            skipped.append(Skipped(uid, f"quality: {label}", detail))
            continue
        views = {
            k: path
            for k in range(fourd.VIEWS_PER_OBJECT)
            if (path := folder / fourd.view_path(Path(), uid, k).name).is_file()
        }
        missing = [k for k in spec.views if k not in views]
        if missing:
            have = f"has views {sorted(views)}" if views else "has no view video"
            skipped.append(Skipped(uid, "missing views", f"needs {missing}; {have}"))
            continue
        objects.append(QAObject(uid, MediaRef(views)))
    return ObjectListing(root, layout, objects, skipped)
