"""`vidbench validate mmworld DIR`: every problem of an MMWorld dataset at once.

Beyond what loading finds (bad records, missing videos, raters of unknown questions), it reads
every video's index (PyAV demux, no pixels: unreadable, cut short, or too short for the frames the
task samples) and checks each question's `answer` text against the option its label names.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from vidbench.benchmarks.mmworld import loader as mmworld
from vidbench.benchmarks.mmworld.loader import meta
from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.media.check import video_problem
from vidbench.tasks.problems import Problem, check_all


def _unusable(video: tuple[Path, str], frames: int) -> Problem | None:
    path, video_id = video
    problem = video_problem(path, frames)
    return None if problem is None else Problem(video_id, path, f"video {video_id} {problem}")


def _answer_mismatch(sample: Sample, path: Path) -> Problem | None:
    fields = meta(sample)
    text = fields.get("answer_text")
    gold = fields["options_in_file"][sample.answer or ""]
    if text is None or " ".join(str(text).split()) == " ".join(gold.split()):
        return None
    return Problem(
        sample.id,
        path,
        f"video {fields['video_id']}: answer {text!r} is not option {sample.answer} ({gold!r})",
    )


def validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    """Every problem at once; each video must give `frames` frames (default: the task's 8)."""
    from vidbench.benchmarks.mmworld.variants import DEFAULT_SPEC

    check = partial(_unusable, frames=frames or DEFAULT_SPEC.frames)
    try:
        annotations, _ = mmworld.resolve(root)
        loaded = mmworld.load(root, subset=None)
    except DataError as e:
        return [Problem("", Path(root), str(e))]
    problems = list(loaded.problems)
    problems += [p for s in loaded.items if (p := _answer_mismatch(s, annotations)) is not None]
    videos = {s.media.videos[0]: s.metadata["video_id"] for s in loaded.items}
    return problems + check_all(list(videos.items()), check, "checking videos", show_progress)
