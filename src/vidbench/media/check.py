"""Is a video usable for a task? The one check `vidbench validate` runs on every video, for
every benchmark: readable, complete (not cut short: see decode.probe), large enough to show
something (decode.too_small), and long enough, inside its window, for the frames the task
samples per view."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.errors import MediaError
from vidbench.media.decode import probe, too_small
from vidbench.media.sampling import window_indices


def video_problem(
    path: Path, frames_needed: int, start_s: float | None = None, end_s: float | None = None
) -> str | None:
    """Why `path` cannot give `frames_needed` frames (unreadable, truncated, too short, a window
    past its end), or None. A missing file is the caller's to word (a view, a clip, a video)."""
    try:
        info = probe(path)
    except MediaError as e:
        return f"is unreadable: {str(e).removeprefix(f'{path}: ')}"
    small = too_small(info)
    if small is not None:
        return small
    if end_s is not None and info.times and end_s > info.times[-1] + 1.0:
        return f"ends at {info.times[-1]:g} s, before its window's end ({end_s:g} s)"
    windowed = start_s is not None or end_s is not None
    found = len(window_indices(info.times, start_s, end_s))
    if found < frames_needed:
        where = " in its window" if windowed else ""
        return f"has {found} frames{where}, fewer than the {frames_needed} the task samples"
    return None
