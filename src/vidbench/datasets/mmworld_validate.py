"""`vidbench validate mmworld DIR`: every problem of an MMWorld dataset at once.

Beyond what loading finds (bad records, missing videos, raters of unknown questions), it decodes
every video's index (PyAV demux, no pixels) and checks each question's `answer` text against the
option its label names.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.datasets import mmworld
from vidbench.datasets.problems import Problem
from vidbench.media.decode import probe
from vidbench.progress import progress_bar


def _unreadable(video_id: str, path: Path) -> Problem | None:
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
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool, progress_bar(not show_progress) as bar:
        task = bar.add_task("checking videos", total=len(videos))
        futures = [pool.submit(_unreadable, vid, path) for path, vid in videos.items()]
        for future in futures:
            if (problem := future.result()) is not None:
                problems.append(problem)
            bar.advance(task)
    return problems
