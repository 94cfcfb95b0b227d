"""PyAV decoding that touches only what the chosen frames need.

`probe` demuxes packets (no decoding) to learn every frame's presentation time and where the
keyframes are. `decode_frames` then decodes only from the keyframe before each wanted frame up to
that frame, seeking forward over stretches it does not need, skipping the frames nothing refers
to, and converts (and resizes, in libswscale) only the wanted frames.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Container, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

from vidbench.console import counted
from vidbench.core.errors import MediaError
from vidbench.core.files import missing_file


@dataclass(frozen=True)
class VideoInfo:
    """Frame `i` in presentation order has timestamp `pts[i]` and starts at `times[i]` seconds."""

    frame_count: int
    width: int
    height: int
    fps: float
    pts: tuple[int, ...]
    times: tuple[float, ...]
    keyframes: tuple[int, ...]  # frame indices (presentation order) of keyframes

    def to_json(self) -> dict:
        return {
            "frame_count": self.frame_count,
            "width": self.width,
            "height": self.height,
            "fps": self.fps,
            "pts": list(self.pts),
            "times": list(self.times),
            "keyframes": list(self.keyframes),
        }

    @classmethod
    def from_json(cls, d: dict) -> VideoInfo:
        return cls(
            d["frame_count"],
            d["width"],
            d["height"],
            d["fps"],
            tuple(d["pts"]),
            tuple(d["times"]),
            tuple(d["keyframes"]),
        )


MIN_SIDE = 16  # pixels: a video whose frames are smaller on a side shows nothing to a model


def too_small(info: VideoInfo) -> str | None:
    """Why a video's frames are too small to show anything ("is 1x1 pixels ..."), or None."""
    if min(info.width, info.height) >= MIN_SIDE:
        return None
    return (
        f"is {info.width}x{info.height} pixels, too small to show anything "
        f"(at least {MIN_SIDE} on each side)"
    )


# Opening a file runs FFmpeg's avformat_find_stream_info, which decodes the first frames to learn
# their pixel format: about 10 ms of CPU for a 1080p clip, paid by every probe and every decode,
# for nothing vidbench reads (the size, rate, time base and frame count come from the container).
# Its decoder (not the one that decodes frames, which starts from the stream's parameters and
# finds the pixel format itself) is told to skip them. A format that says its frame size only
# in the frames (none that vidbench meets so far) is opened again as before.
SKIP_STREAM_INFO_DECODING = {"skip_frame": "all"}


def _open(path: Path) -> av.container.InputContainer:
    if not path.is_file():
        raise MediaError(f"{path}: {missing_file(path, 'video file')}")
    if path.stat().st_size == 0:  # FFmpeg says only "Invalid data found when processing input"
        raise MediaError(
            f"{path}: an empty file (0 bytes): a copy or download that did not finish?"
        )
    try:
        container = av.open(str(path), options=SKIP_STREAM_INFO_DECODING)
        if container.streams.video and not _has_size(container.streams.video[0]):
            container.close()
            container = av.open(str(path))
    except (av.FFmpegError, OSError, ValueError) as e:
        raise MediaError(f"{path}: cannot open video ({e})") from e
    if not container.streams.video:
        container.close()
        raise MediaError(f"{path}: no video stream")
    return container


def _has_size(stream: av.video.stream.VideoStream) -> bool:
    return stream.codec_context.width > 0 and stream.codec_context.height > 0


def probe(path: Path) -> VideoInfo:
    """Read frame timestamps and keyframe positions by demuxing (cheap: nothing is decoded)."""
    container = _open(path)
    try:
        stream = container.streams.video[0]
        entries: list[tuple[int, bool]] = []
        for packet in container.demux(stream):
            if packet.size == 0 or packet.pts is None:
                continue
            entries.append((packet.pts, packet.is_keyframe))
        if not entries:
            raise MediaError(f"{path}: no decodable video frames")
        _check_complete(path, container, stream, entries)
        entries.sort()
        pts = tuple(p for p, _ in entries)
        start = pts[0]
        tb = _time_base(path, stream)
        fps = float(stream.average_rate) if stream.average_rate else 0.0
        return VideoInfo(
            frame_count=len(pts),
            width=stream.codec_context.width,
            height=stream.codec_context.height,
            fps=fps,
            pts=pts,
            times=tuple(round((p - start) * tb, 6) for p in pts),
            keyframes=tuple(i for i, (_, key) in enumerate(entries) if key),
        )
    except av.FFmpegError as e:
        raise MediaError(f"{path}: corrupt video ({e})") from e
    finally:
        container.close()


def _time_base(path: Path, stream: av.video.stream.VideoStream) -> float:
    """Seconds per tick of the stream's timestamps."""
    if stream.time_base is None:
        raise MediaError(f"{path}: the video stream has no time base")
    return float(stream.time_base)


def _check_complete(
    path: Path,
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    entries: Sequence[tuple[int, bool]],
) -> None:
    """MediaError when the file holds fewer frames than its container declares: a download or
    copy cut part-way (an mp4 whose index lists every frame while the data stops early).
    Containers that declare no frame count (Matroska, WebM) are checked against their declared
    duration, with a margin of two frames or 2%, whichever is larger."""
    present = len(entries)
    if stream.frames:
        if present < stream.frames:
            raise MediaError(
                f"{path}: truncated: declares {stream.frames} frames, {present} present"
            )
        return
    rate = float(stream.average_rate or 0)
    if not container.duration or not rate:
        return
    declared_s = container.duration / av.time_base
    tb = _time_base(path, stream)
    pts = sorted(p for p, _ in entries)
    covered_s = (pts[-1] - pts[0]) * tb + 1 / rate
    if covered_s < declared_s - max(2 / rate, 0.02 * declared_s):
        raise MediaError(
            f"{path}: truncated: declares {declared_s:.2f} s "
            f"(about {round(declared_s * rate)} frames), {present} frames present"
        )


def _needs_seek(info: VideoInfo, position: int, target: int) -> bool:
    """Seek when a keyframe lies after the decoder's position and at or before the target."""
    if target < position:
        return True
    k = bisect.bisect_right(info.keyframes, target) - 1
    return k >= 0 and info.keyframes[k] > position


def decode_frames(
    path: Path, info: VideoInfo, indices: Sequence[int], max_side: int | None = None
) -> dict[int, np.ndarray]:
    """Decode the frames at `indices` (presentation order) as RGB uint8 arrays.

    Frames are resized by libswscale (area filter) when `max_side` is given.
    """
    wanted = sorted(set(indices))
    if not wanted:
        return {}
    if wanted[0] < 0 or wanted[-1] >= info.frame_count:
        length = counted(info.frame_count, "frame")
        raise MediaError(f"{path}: frame {wanted[-1]} asked of a video of {length}")
    width, height = _target_size(info.width, info.height, max_side)
    by_pts = {info.pts[i]: i for i in wanted}
    out: dict[int, np.ndarray] = {}
    with decoding() as threads:
        container = _open(path)
        try:
            _decode_into(out, container, path, info, wanted, by_pts, (width, height), threads)
        except av.FFmpegError as e:
            raise MediaError(f"{path}: corrupt video ({e})") from e
        finally:
            container.close()
    return out


class _Decoders:
    """The decodes running in this process, to share the cores among them (`decoding`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0


_DECODERS = _Decoders()


@contextmanager
def decoding() -> Iterator[int]:
    """Count a decode among those running in this process while it runs, and give the threads
    it may use: the cores shared among the decodes running as it starts (all of them for a
    decode alone, one a decode once as many run as there are cores). FFmpeg's own thread
    count (cores + 1 frame threads a decode) pays off for a decode alone but costs CPU when
    decodes already share the cores: 24 1080p clips, two at a time on 2 cores, took 12.6 CPU s
    and 6.6 s with it, 10.4 CPU s and 5.6 s with one thread each (bench/api_cold.py's floor)."""
    with _DECODERS.lock:
        _DECODERS.running += 1
        threads = max(1, (os.cpu_count() or 1) // _DECODERS.running)
    try:
        yield threads
    finally:
        with _DECODERS.lock:
            _DECODERS.running -= 1


def _decode_into(
    out: dict[int, np.ndarray],
    container: av.container.InputContainer,
    path: Path,
    info: VideoInfo,
    wanted: list[int],
    by_pts: Mapping[int, int],
    size: tuple[int, int],
    threads: int,
) -> None:
    """decode_frames' work on an open container with `threads` decoding threads."""
    stream = container.streams.video[0]
    stream.thread_type = "AUTO"
    stream.codec_context.thread_count = threads
    position = 0  # index of the next frame the decoder will produce
    frames = None  # one decode iterator per contiguous stretch: frames in flight stay in it
    for target in wanted:
        if frames is None or _needs_seek(info, position, target):
            k = bisect.bisect_right(info.keyframes, target) - 1
            if frames is not None or (k >= 0 and info.keyframes[k] > 0):
                _seek(container, stream, info, info.keyframes[k] if k >= 0 else 0)
            frames = _decode_from_here(container, stream, by_pts)
        position = _read_to(frames, target, info, by_pts, out, size, position)
        # a container that seeks by decoding time (MPEG-TS with B-frames) can land after
        # the keyframe asked for, where nothing decodes until the next one: then from each
        # earlier keyframe in turn, the first frame last
        earlier = [*[f for f in reversed(info.keyframes) if f <= target][1:], 0]
        while target not in out and earlier:
            _seek(container, stream, info, earlier.pop(0))
            frames = _decode_from_here(container, stream, by_pts)
            position = _read_to(frames, target, info, by_pts, out, size, 0)
        if target not in out:
            raise MediaError(f"{path}: frame {target} could not be decoded")


def _seek(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    info: VideoInfo,
    frame: int,
) -> None:
    container.seek(info.pts[frame], stream=stream, backward=True)


def _read_to(
    frames: Iterator[av.VideoFrame],
    target: int,
    info: VideoInfo,
    by_pts: Mapping[int, int],
    out: dict[int, np.ndarray],
    size: tuple[int, int],
    position: int,
) -> int:
    """Decode on until the frame at `target` (or a later one) comes out, keeping every wanted
    frame met in `out` at `size`; the index of the next frame the decoder will produce (was
    `position`)."""
    width, height = size
    for frame in frames:
        if frame.pts is None:
            continue
        position = bisect.bisect_right(info.pts, frame.pts)
        index = by_pts.get(frame.pts)
        if index is not None:
            out[index] = frame.to_ndarray(
                width=width, height=height, format="rgb24", interpolation="AREA"
            )
        if frame.pts >= info.pts[target]:
            break
    return position


def _decode_from_here(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    wanted_pts: Container[int],
) -> Iterator[av.VideoFrame]:
    """The stream's frames from the container's position on, without decoding the frames that
    are not wanted and that no other frame refers to: FFmpeg's `skip_frame = NONREF`, set per
    packet (a frame-threaded decoder reads it when the packet is sent). Reference frames and
    every wanted frame are decoded as they would be without it, so the wanted frames come out
    bit-for-bit the same; H.264 with B-frames skips about 45% of the frames of real clips."""
    codec = stream.codec_context
    for packet in container.demux(stream):
        wanted = packet.pts is None or packet.pts in wanted_pts
        codec.skip_frame = "DEFAULT" if wanted else "NONREF"
        yield from packet.decode()


def _target_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))
