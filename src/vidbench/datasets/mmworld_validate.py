"""`vidbench validate mmworld DIR`: every problem of an MMWorld dataset at once.

Beyond what loading finds (bad records, missing videos, raters of unknown questions), it decodes
every video's index (PyAV demux, no pixels) and checks each question's `answer` text against the
option its label names.
"""

from __future__ import annotations

from pathlib import Path

from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.datasets import mmworld
from vidbench.datasets.problems import Problem, check_all
from vidbench.media.decode import probe


def _unreadable(video: tuple[Path, str]) -> Problem | None:
    path, video_id = video
    try:
        probe(path)
    except DataError as e:
        return Problem(video_id, path, f"video {video_id} is unreadable: {e}")
    return None


def _answer_mismatch(sample: Sample, path: Path) -> Problem | None:
    text = sample.metadata.get("answer_text")
    gold = sample.metadata["options_in_file"][sample.answer]
    if text is None or " ".join(str(text).split()) == " ".join(gold.split()):
        return None
    return Problem(
        sample.id,
        path,
        f"video {sample.metadata['video_id']}: answer {text!r} is not option "
        f"{sample.answer} ({gold!r})",
    )


def validate(root: Path, show_progress: bool = False) -> list[Problem]:
    try:
        annotations, _ = mmworld.resolve(root)
        loaded = mmworld.load(root, subset=None)
    except DataError as e:
        return [Problem("", Path(root), str(e))]
    problems = list(loaded.problems)
    problems += [p for s in loaded.items if (p := _answer_mismatch(s, annotations)) is not None]
    videos = {s.media.videos[0]: s.metadata["video_id"] for s in loaded.items}
    return problems + check_all(list(videos.items()), _unreadable, "checking videos", show_progress)
