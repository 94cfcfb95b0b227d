"""`vidbench curate 4d motion VIDEOS`: the motion filter alone, on videos already rendered.

VIDEOS is a folder in the official layout (<uid>/view_{k}_rgb_white_bg.mp4: view ``view`` of
each object is read) or a folder of .mp4 files (one object each, named by the file's stem). Each
object's motion range is found by pixel change (motion.py); static objects, unreadable videos and
objects without the view are dropped, with the uid, file and reason. Writes OUT/motion.jsonl (one
record per object; `curate 4d qa` skips the dropped ones) and the "motion" stage of
OUT/funnel.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.fourd.curate import funnel
from vidbench.benchmarks.fourd.curate.manifest import AssetProblem
from vidbench.benchmarks.fourd.curate.motion import MotionSettings, video_motion
from vidbench.benchmarks.fourd.loader import RENDER_FILE
from vidbench.benchmarks.fourd.synthetic.writer import VIEW_VIDEOS, video_name
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.files import write_jsonl
from vidbench.media.cache import file_digest
from vidbench.progress import progress_bar

MOTION_FILE = "motion.jsonl"


def render_digest(folder: Path) -> dict[str, str]:
    """{"render": the hash of the object's render.json} for a record of motion.jsonl or
    quality.jsonl, so `curate 4d qa` can tell a judgement of an earlier render (the object
    rendered again since) from one of this render; {} without a render.json."""
    try:
        return {"render": file_digest(folder / RENDER_FILE)}
    except OSError:
        return {}


class MissingView(MediaError):
    """The view examined is not there, though other views of the object are."""


@dataclass(frozen=True)
class MotionResult:
    uid: str
    file: str
    start: int | None
    end: int | None
    score: float

    @property
    def moving(self) -> bool:
        return self.start is not None


def object_folders(videos: Path) -> list[Path]:
    """The object folders of VIDEOS (official layout): every folder holding a view's video,
    sorted by uid."""
    return sorted(p for p in videos.iterdir() if p.is_dir() and any(p.glob(VIEW_VIDEOS)))


def object_videos(videos: Path, view: int = 0) -> dict[str, Path]:
    """uid -> the video to examine, for either VIDEOS layout: every folder holding a view's
    video is an object, also when the view examined is the one it lacks (it is dropped as
    "missing view", not left out of the count)."""
    videos = Path(videos)
    if not videos.is_dir():
        raise ConfigError(f"not a folder of videos: {videos}")
    found = {p.name: p / video_name(view) for p in object_folders(videos)}
    if not found:
        found = {p.stem: p for p in sorted(videos.glob("*.mp4"))}
    if not found:
        raise ConfigError(f"{videos}: no <uid>/{video_name(view)} and no .mp4 files")
    return found


def filter_motion(
    videos: Path, out: Path, settings: MotionSettings, view: int = 0, progress: bool = True
) -> tuple[list[MotionResult], list[AssetProblem]]:
    """Motion range of every object in VIDEOS; (moving objects, dropped ones)."""
    found = object_videos(videos, view)
    funnel.refuse_other(Path(out), "curate 4d motion")
    kept: list[MotionResult] = []
    dropped: list[AssetProblem] = []
    lines: list[dict[str, JsonValue]] = []
    with progress_bar(disable=not progress) as bar:
        task = bar.add_task("motion", total=len(found))
        for uid, path in found.items():
            try:
                if not path.is_file():
                    raise MissingView(f"{path}: no such file (the object's other views exist)")
                motion = video_motion(path, settings)
            except MediaError as e:
                reason = "missing view" if isinstance(e, MissingView) else "unreadable video"
                dropped.append(AssetProblem(uid, str(path), reason, str(e)))
                lines.append(
                    {"uid": uid, "file": str(path), "error": str(e), **render_digest(path.parent)}
                )
                bar.advance(task)
                continue
            result = MotionResult(uid, str(path), motion.start, motion.end, motion.score)
            lines.append({**result.__dict__, "moving": result.moving, **render_digest(path.parent)})
            if result.moving:
                kept.append(result)
            else:
                dropped.append(
                    AssetProblem(uid, str(path), "no motion", f"largest change {motion.score:.4f}")
                )
            bar.advance(task)
    out = Path(out)
    write_jsonl(out / MOTION_FILE, lines)
    funnel.record(out, "motion", funnel.stage_count(len(found), len(kept), dropped))
    return kept, dropped
