"""Keyframe selection: N representative frames of a video, chosen by content change.

Why our own selector and not PySceneDetect (or Katna, which the MMWorld authors used): both pull
in OpenCV (~60 MB of wheels) for what is, at N <= a few dozen frames, a small computation on
frames we already decode with PyAV; a shot detector also answers a different question (where are
the cuts) and still needs a rule to turn shots into exactly N frames. Ours is deterministic,
dependency-free and cached:

1. Take up to `MAX_ANALYSED` frames spread evenly over the window and decode them at
   `ANALYSIS_SIDE` pixels on the longer side (libswscale area filter); their luma, scaled to
   [0, 1] and divided by sqrt(pixels), is each frame's feature (squared distances are then mean
   squared luma differences), plus the frame's time position (0..1) times `TIME_WEIGHT`.
2. Split the sequence into N contiguous segments that minimise the total within-segment
   variance (optimal piecewise-constant fit, dynamic programming over prefix sums). Cuts and
   fast changes attract segment boundaries; a long static stretch is one segment. The small time
   term makes a static video fall back to equal-length segments instead of arbitrary ones.
3. From each segment take its medoid (the frame closest to the segment's mean): the most
   typical frame, not a transition frame. The picks are distinct and in time order.

Picks are cached per (video bytes, window, N, algorithm version) under the frame cache, so each
video is analysed once, however many questions or runs use it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vidbench.core.errors import MediaError
from vidbench.core.files import write_atomic
from vidbench.media.cache import FrameCache
from vidbench.media.decode import VideoInfo, decode_frames

ALGORITHM = "luma-segments-v1"
MAX_ANALYSED = 360  # frames looked at per video (evenly spread); the DP is O(N * this^2)
ANALYSIS_SIDE = 32  # pixels on the longer side of an analysed frame
TIME_WEIGHT = 0.1  # feature distance of the whole window's time span (RMS luma units)
_LUMA = np.array([0.299, 0.587, 0.114])

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def features(frames: Sequence[np.ndarray], times: np.ndarray) -> np.ndarray:
    """Rows of [luma / sqrt(pixels), TIME_WEIGHT * time] for RGB uint8 frames; `times` in 0..1."""
    luma = np.stack([(f.astype(np.float64) @ _LUMA).ravel() / 255.0 for f in frames])
    luma /= np.sqrt(luma.shape[1])
    return np.hstack([luma, TIME_WEIGHT * times[:, None]])


def segment(x: np.ndarray, n: int) -> list[tuple[int, int]]:
    """The n contiguous [start, end) segments of rows of `x` with the least total squared
    deviation from their segment means (each segment non-empty)."""
    t = len(x)
    if not 1 <= n <= t:
        raise ValueError(f"cannot split {t} frames into {n} segments")
    p = np.vstack([np.zeros(x.shape[1]), np.cumsum(x, axis=0)])  # prefix sums of rows
    q = np.concatenate([[0.0], np.cumsum(np.einsum("ij,ij->i", x, x))])  # of squared norms
    gram = p @ p.T
    sq = np.diag(gram)
    length = np.arange(t + 1)[None, :] - np.arange(t + 1)[:, None]  # j - i
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = (q[None, :] - q[:, None]) - (sq[None, :] + sq[:, None] - 2 * gram) / length
    cost[length <= 0] = np.inf  # cost[i, j]: frames i..j-1 as one segment
    best = cost[0].copy()  # best[j]: frames 0..j-1 in k segments
    back = np.zeros((n, t + 1), dtype=int)
    for k in range(1, n):
        total = best[:, None] + cost  # previous k segments end at i, segment k is i..j-1
        back[k] = np.argmin(total, axis=0)
        best = total[back[k], np.arange(t + 1)]
    bounds, end = [], t
    for k in range(n - 1, -1, -1):
        start = int(back[k, end]) if k else 0
        bounds.append((start, end))
        end = start
    return bounds[::-1]


def medoids(x: np.ndarray, bounds: Sequence[tuple[int, int]]) -> list[int]:
    """Per segment, the row closest to the segment's mean (the earliest on a tie)."""
    picks = []
    for start, end in bounds:
        part = x[start:end]
        picks.append(start + int(np.argmin(((part - part.mean(axis=0)) ** 2).sum(axis=1))))
    return picks


def _analysed(window_len: int) -> list[int]:
    """Positions (in the window) of the frames looked at."""
    if window_len <= MAX_ANALYSED:
        return list(range(window_len))
    return [int(i) for i in np.linspace(0, window_len - 1, MAX_ANALYSED).round()]


def select(path: Path, info: VideoInfo, window: Sequence[int], n: int) -> list[int]:
    """Frame indices (of the video) of the n keyframes of `window`, in time order."""
    if len(window) < n:
        raise MediaError(f"video has {len(window)} frames, fewer than the {n} asked for")
    positions = _analysed(len(window))
    indices = [window[p] for p in positions]
    pixels = decode_frames(path, info, indices, ANALYSIS_SIDE)
    span = max(1, len(window) - 1)
    x = features([pixels[i] for i in indices], np.array(positions, dtype=np.float64) / span)
    return [indices[i] for i in medoids(x, segment(x, n))]


def pick_keyframes(
    path: Path,
    info: VideoInfo,
    window: Sequence[int],
    n: int,
    cache: FrameCache | None = None,
    digest: str = "",
) -> list[int]:
    """`select`, through the frame cache when there is one (one analysis per video at a time)."""
    if cache is None or not digest:
        return select(path, info, window, n)
    name = f"{digest}-{ALGORITHM}-n{n}-{window[0] if window else 0}-{len(window)}.json"
    file = cache.root / "keyframes" / digest[:2] / name
    with _locks_guard:
        lock = _locks.setdefault(name, threading.Lock())
    with lock:
        if file.is_file():
            return [int(i) for i in json.loads(file.read_text())]
        picks = select(path, info, window, n)
        write_atomic(file, json.dumps(picks).encode())
        return picks
