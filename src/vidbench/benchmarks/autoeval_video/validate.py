"""`vidbench validate autoeval-video DIR`: every problem of an AutoEval-Video folder."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from vidbench.benchmarks.autoeval_video.loader import FULL_DIR, load, youtube_id
from vidbench.benchmarks.autoeval_video.task import DEFAULT_SPEC
from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.tasks.problems import Problem, check_all


def check_media(sample: Sample, frames: int) -> Problem | None:
    from vidbench.media.check import video_problem

    video = sample.media.videos[0]
    if not video.is_file():
        full = youtube_id(sample.metadata["video_url"])
        alternative = f" and no full-length video {FULL_DIR}/{full}.mp4" if full else ""
        return Problem(sample.id, video, f"missing clip{alternative}")
    problem = video_problem(video, frames, sample.media.start_s, sample.media.end_s)
    return None if problem is None else Problem(sample.id, video, f"clip {problem}")


def validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    """Every problem of an AutoEval-Video folder: malformed rows; missing, unreadable, cut short
    clips, or clips with fewer than `frames` frames (default: the task's 8) in their window."""
    try:
        loaded = load(root)
    except DataError as e:
        return [Problem("", Path(root), str(e))]
    check = partial(check_media, frames=frames or DEFAULT_SPEC.frames)
    return [*loaded.problems, *check_all(loaded.items, check, "checking clips", show_progress)]
