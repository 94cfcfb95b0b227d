"""Turn a sample's media and a FrameSpec into the ordered, encoded frames a model sees."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.errors import MediaError
from vidbench.core.files import missing_file
from vidbench.core.messages import ImagePart
from vidbench.core.records import MediaRef
from vidbench.media.arrange import arrange
from vidbench.media.cache import FrameCache, file_digest
from vidbench.media.decode import VideoInfo, decode_frames, probe, too_small
from vidbench.media.frame import Frame
from vidbench.media.images import MIME, encode_image
from vidbench.media.keyframes import pick_keyframes
from vidbench.media.sampling import sample_indices, window_indices
from vidbench.media.spec import FrameSpec


def _variant(spec: FrameSpec) -> str:
    size = "orig" if spec.max_side is None else str(spec.max_side)
    fmt = f"q{spec.jpeg_quality}.jpg" if spec.image_format == "jpeg" else "png"
    return f"{size}-{fmt}"


def _view_frames(
    path: Path,
    media: MediaRef,
    spec: FrameSpec,
    view: int,
    cache: FrameCache | None,
    pixels: bool = True,
) -> list[Frame]:
    if not path.is_file():
        raise MediaError(f"{path}: {missing_file(path, f'view {view} video file')}")
    digest = cache.video_digest(path) if cache else file_digest(path)
    info = cache.info(path, digest) if cache else probe(path)
    small = too_small(info)
    if small is not None:  # refused, not sent as frames that show nothing
        raise MediaError(f"{path}: view {view} video {small}")
    window = window_indices(info.times, media.start_s, media.end_s)
    picks = frame_picks(path, info, window, spec, cache, digest)
    variant = _variant(spec)
    if not pixels:
        encoded = dict.fromkeys(picks, b"")
    elif cache:  # one decode per video and frames in flight: the others wait, then read the cache
        with cache.single_flight(("frames", digest, variant, tuple(picks))):
            encoded = _encoded_frames(path, info, picks, spec, cache, digest)
    else:
        encoded = _encoded_frames(path, info, picks, spec, None, digest)
    origin = info.times[window[0]]
    mime = MIME[spec.image_format]
    return [
        Frame(
            view=view,
            index=i,
            time_s=round(info.times[i] - origin, 3),
            image=ImagePart(encoded[i], mime, f"view {view}, frame {i}", digest),
        )
        for i in picks
    ]


def frame_picks(
    path: Path,
    info: VideoInfo,
    window: list[int],
    spec: FrameSpec,
    cache: FrameCache | None = None,
    digest: str = "",
) -> list[int]:
    """The indices of the frames `spec` samples out of `window` (a time window's frames)."""
    try:
        if spec.sampler == "keyframes":
            return pick_keyframes(path, info, window, spec.frames, cache, digest)
        return [window[i] for i in sample_indices(len(window), spec.frames, spec.sampler)]
    except MediaError as e:
        raise MediaError(f"{path}: {e}") from None


def _encoded_frames(
    path: Path,
    info: VideoInfo,
    picks: list[int],
    spec: FrameSpec,
    cache: FrameCache | None,
    digest: str,
) -> dict[int, bytes]:
    """The encoded frames `picks`, from the cache where it has them, else decoded (and cached)."""
    variant = _variant(spec)
    encoded: dict[int, bytes] = {}
    if cache:
        for index in picks:
            data = cache.get_frame(digest, index, variant)
            if data is not None:
                encoded[index] = data
    missing = [i for i in picks if i not in encoded]
    if missing:
        pixels = decode_frames(path, info, missing, spec.max_side)
        for index, array in pixels.items():
            data = encode_image(array, spec.image_format, spec.jpeg_quality)
            encoded[index] = data
            if cache:
                cache.put_frame(digest, index, variant, data)
    return encoded


def load_frames(
    media: MediaRef, spec: FrameSpec, cache: FrameCache | None = None, pixels: bool = True
) -> list[Frame]:
    """The frames of `spec.views`, sampled and ordered as the spec says (then shuffled or tiled
    into one grid image when the spec asks for it).

    `pixels=False` (a spec without a grid only): the same frames with empty image data, which
    name the frames a request would have (and so its store key) without reading or decoding
    any image.

    Raises MediaError naming the file for a missing view, an unreadable video or one with fewer
    frames than asked.
    """
    assert pixels or spec.grid is None, "a grid image's frames need their pixels"
    per_view: list[list[Frame]] = []
    for view in spec.views:
        path = media.videos.get(view)
        if path is None:
            raise MediaError(f"view {view} is missing (have views {sorted(media.videos)})")
        path = path if isinstance(path, Path) else Path(path)  # a loader's are Paths already
        per_view.append(_view_frames(path, media, spec, view, cache, pixels))
    if spec.order == "view-first":
        ordered = [frame for view_frames in per_view for frame in view_frames]
    else:
        ordered = [view_frames[t] for t in range(spec.frames) for view_frames in per_view]
    return arrange(ordered, spec)
