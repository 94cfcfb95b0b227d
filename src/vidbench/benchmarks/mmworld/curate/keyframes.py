"""The keyframes stage: N representative frames per video (MMWorld paper, section 3.2: "selects
ten representative frames from each video"), chosen by vidbench's keyframe selector
(media/keyframes.py, through the frame loader and its cache) instead of the paper's Katna.

The frames are what the visual-only questions are generated from and what the filters show as
"the keyframes alone". They are written as `OUT/<video_id>/NN_frameINDEX_TIMEs.jpg` for people to
look at (this run's only: older ones in the folder are removed). Each image is labelled with the
video file's hash and its frame index, so a stored model reply about one video's frames is never
reused for another video's.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from vidbench.benchmarks.mmworld.curate.videos import VideoEntry
from vidbench.core.errors import DataError
from vidbench.core.files import write_atomic
from vidbench.core.messages import ImagePart
from vidbench.core.records import MediaRef
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame
from vidbench.media.frames import load_frames
from vidbench.media.spec import FrameSpec
from vidbench.progress import progress_bar

DEFAULT_KEYFRAMES = 10  # the paper's "ten representative frames"
DEFAULT_MAX_SIDE = 768  # enough for a generator to read the scene; keeps requests small


@dataclass(frozen=True)
class Keyframes:
    video_id: str
    frames: tuple[Frame, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def images(self) -> tuple[ImagePart, ...]:
        return tuple(f.image for f in self.frames)


def keyframe_spec(
    count: int = DEFAULT_KEYFRAMES, max_side: int | None = DEFAULT_MAX_SIDE
) -> FrameSpec:
    return FrameSpec(views=(0,), frames=count, sampler="keyframes", max_side=max_side)


def _one(video: VideoEntry, spec: FrameSpec, cache: FrameCache) -> Keyframes:
    try:
        frames = load_frames(MediaRef.single(video.path), spec, cache)
        file_hash = cache.video_digest(video.path)
    except (DataError, OSError) as e:  # MediaError is a DataError
        return Keyframes(video.video_id, error=str(e))
    labelled = tuple(
        replace(f, image=replace(f.image, label=f"{file_hash} frame {f.index}")) for f in frames
    )
    return Keyframes(video.video_id, labelled)


def _write_frames(folder: Path, frames: Sequence[Frame]) -> None:
    """The frames as JPEGs in `folder`, and no other: those of an earlier run (another count, the
    video since changed) would show people frames the generator was not sent."""
    names = {f"{i:02d}_frame{f.index:06d}_{f.time_s:.2f}s.jpg": f for i, f in enumerate(frames)}
    for old in folder.glob("*.jpg") if folder.is_dir() else ():
        if old.name not in names:
            old.unlink()
    for name, frame in names.items():
        write_atomic(folder / name, frame.image.data)


def select_keyframes(
    videos: Sequence[VideoEntry],
    spec: FrameSpec,
    cache: FrameCache,
    out: Path | None = None,
    show_progress: bool = False,
) -> dict[str, Keyframes]:
    """Keyframes of every video, decoded in a thread pool (PyAV works outside the GIL)."""
    results: dict[str, Keyframes] = {}
    with ThreadPoolExecutor(4) as pool, progress_bar(disable=not show_progress) as progress:
        bar = progress.add_task("keyframes", total=len(videos))
        futures = [pool.submit(_one, video, spec, cache) for video in videos]
        for video, future in zip(videos, futures, strict=True):
            found = future.result()
            results[video.video_id] = found
            if out is not None:  # none for a video that failed: its old ones are not its
                _write_frames(out / video.video_id, found.frames)
            progress.advance(bar)
    return results
