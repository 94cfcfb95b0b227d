"""`vidbench validate custom DIR`: every problem of a declared benchmark (its benchmark.toml,
its rows, its videos), not just the first; DIR may also be an exported copy holding one."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from vidbench.benchmarks.custom.declared import declared_benchmark
from vidbench.benchmarks.custom.loader import has_gold
from vidbench.benchmarks.custom.spec import read_spec as benchmark_spec
from vidbench.console import err
from vidbench.core.errors import DataError
from vidbench.media.check import video_problem
from vidbench.tasks.data import load_samples
from vidbench.tasks.problems import Problem, check_all
from vidbench.tasks.registry import build_task

# (video, window start, window end) -> the id of a sample that shows it
Clip = tuple[tuple[Path, float | None, float | None], str]


def _check_clip(clip: Clip, frames: int) -> Problem | None:
    (path, start, end), sample_id = clip
    problem = video_problem(path, frames, start, end)
    return None if problem is None else Problem(sample_id, path, f"video {problem}")


def validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    """The rows' problems, then each video's (it must give the frames a task samples: the
    benchmark's `frames`, or FRAMES). A bad benchmark.toml stops with its ConfigError."""
    folder = Path(root).expanduser().resolve()
    benchmark = declared_benchmark(folder)
    [name] = benchmark.tasks
    task = build_task(benchmark.tasks, name)
    try:
        loaded = load_samples(task, folder)
    except DataError as e:
        return [Problem("", folder, str(e))]
    no_gold = [s.id for s in loaded.items if not has_gold(s)]
    if no_gold:  # a test split, or a misnamed `answer` field: either way it is said
        spec = benchmark_spec(folder)
        err.print(
            f"note: {len(no_gold)} of {len(loaded.items)} rows have no gold answer (field "
            f"{spec.answer!r}{' and the answers file' if spec.answers else ''}; e.g. "
            f"{no_gold[0]}): they are asked and counted unscored (no-gold)",
            highlight=False,
            markup=False,
        )
    clips = {
        (path, s.media.start_s, s.media.end_s): s.id
        for s in loaded.items
        for path in s.media.videos.values()
    }
    check = partial(_check_clip, frames=frames or task.frame_spec.frames)
    return loaded.problems + check_all(list(clips.items()), check, "checking videos", show_progress)
