"""FrameSpec, samplers, PyAV decoding, the frame cache and `vidbench frames`."""

from __future__ import annotations

import shutil
from pathlib import Path

import av
import numpy as np
import pytest

from conftest import AUTOEVAL, AUTOEVAL_CLIPS, solid_frames
from vidbench.cli import main
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.records import MediaRef
from vidbench.media import decode as decode_module
from vidbench.media import frames as frames_module
from vidbench.media.cache import FrameCache
from vidbench.media.decode import decode_frames, probe
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.media.sampling import sample_indices
from vidbench.media.spec import FrameSpec, parse_views, views_evenly

CLIPS = sorted((AUTOEVAL / "video").glob("*.mp4"))


def test_autoeval_clips_are_there() -> None:
    assert len(CLIPS) == AUTOEVAL_CLIPS, f"expected {AUTOEVAL_CLIPS} clips in {AUTOEVAL / 'video'}"


def test_interval_sampler_is_official() -> None:
    assert sample_indices(100, 6, "interval") == [0, 16, 32, 48, 64, 80]
    assert sample_indices(6, 6, "interval") == [0, 1, 2, 3, 4, 5]
    assert sample_indices(13, 6, "interval") == [0, 2, 4, 6, 8, 10]


def test_linspace_sampler_has_both_ends() -> None:
    assert sample_indices(100, 6, "linspace") == list(np.linspace(0, 99, 6, dtype=int))
    assert sample_indices(100, 6, "linspace")[-1] == 99
    assert sample_indices(1, 1, "linspace") == [0]


@pytest.mark.parametrize("sampler", ["interval", "linspace"])
def test_too_few_frames_is_an_error(sampler: str) -> None:
    with pytest.raises(MediaError, match="5 frames, fewer than the 6"):
        sample_indices(5, 6, sampler)


def test_views() -> None:
    assert views_evenly(3) == (0, 8, 16)
    assert views_evenly(4) == (0, 6, 12, 18)
    assert parse_views("1,8,16") == (1, 8, 16)
    assert parse_views("2") == (0, 12)
    with pytest.raises(ConfigError):
        parse_views("abc")
    with pytest.raises(ConfigError):
        views_evenly(25)


def test_frame_spec_is_frozen_hashable_and_validated() -> None:
    spec = FrameSpec()  # one plain video, 8 frames over its whole length
    assert spec.views == (0,) and spec.n_images == 8 and spec.sampler == "linspace"
    spec = FrameSpec(views=(1, 8, 16), frames=6)
    assert spec.n_images == 18
    assert hash(spec) == hash(FrameSpec(views=(1, 8, 16), frames=6))
    assert spec.digest() != spec.with_(order="time-first").digest()
    assert FrameSpec.from_dict(spec.as_dict()) == spec
    with pytest.raises(ConfigError):
        FrameSpec(frames=0)
    with pytest.raises(ConfigError):
        FrameSpec(sampler="random")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        spec.with_(colour=True)


@pytest.mark.parametrize("clip", CLIPS, ids=lambda p: p.name)
def test_decodes_every_autoeval_clip(clip: Path) -> None:
    spec = FrameSpec(views=(0,), frames=8, sampler="linspace", max_side=160)
    frames = load_frames(MediaRef.single(clip), spec)
    info = probe(clip)
    assert [f.index for f in frames] == sample_indices(info.frame_count, 8, "linspace")
    assert frames[-1].index == info.frame_count - 1
    image = decode_image(frames[0].image.data)
    assert max(image.size) == 160
    assert frames[0].time_s == 0.0 and frames[-1].time_s > 1.0


@pytest.mark.parametrize("clip", CLIPS[:3], ids=lambda p: p.name)
def test_selective_decode_equals_decoding_everything(clip: Path) -> None:
    info = probe(clip)
    wanted = sample_indices(info.frame_count, 6, "interval")
    got = decode_frames(clip, info, wanted, max_side=96)
    with av.open(str(clip)) as container:
        first = got[wanted[0]]
        every = [
            f.to_ndarray(
                width=first.shape[1], height=first.shape[0], format="rgb24", interpolation="AREA"
            )
            for f in container.decode(video=0)
        ]
    assert len(every) == info.frame_count
    for index in wanted:
        assert np.array_equal(got[index], every[index])


@pytest.mark.parametrize("clip", CLIPS[:2], ids=lambda p: p.name)
def test_probe_reads_what_a_plain_open_reads(clip: Path) -> None:
    """Opening a video without decoding its first frames (decode._open) gives the probe the
    size, rate and frame count that opening it as PyAV does by default gives."""
    info = probe(clip)
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        plain = (stream.codec_context.width, stream.codec_context.height, stream.frames)
        assert (info.width, info.height, info.frame_count) == plain
        assert info.fps == float(stream.average_rate)


def test_a_video_whose_size_needs_decoding_is_opened_again(monkeypatch) -> None:
    """Where the container does not say the frame size, the video is opened again with its
    first frames decoded: the probe and the frames are what they would be."""
    clip = CLIPS[0]
    expected = probe(clip)
    frames = decode_frames(clip, expected, [0, expected.frame_count - 1], max_side=64)
    opened: list[dict[str, str] | None] = []
    real_open = av.open

    def recording_open(path: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(kwargs.get("options"))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(decode_module.av, "open", recording_open)
    monkeypatch.setattr(decode_module, "_has_size", lambda stream: False)
    assert probe(clip) == expected
    again = decode_frames(clip, expected, [0, expected.frame_count - 1], max_side=64)
    assert all(np.array_equal(again[i], frames[i]) for i in frames)
    assert opened == [decode_module.SKIP_STREAM_INFO_DECODING, None] * 2


def _moving_video(path: Path, codec: str, options: dict[str, str], n: int = 60) -> None:
    """A clip whose content moves every frame (so inter frames carry real motion), written with
    `codec` and B-frames where the codec has them."""
    rng = np.random.default_rng(7)
    texture = rng.integers(0, 255, size=(96, 160, 3), dtype=np.uint8)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(codec, rate=24, options=options)
        stream.width, stream.height, stream.pix_fmt = 96, 64, "yuv420p"
        for t in range(n):
            frame = np.ascontiguousarray(texture[t % 32 : t % 32 + 64, t : t + 96])
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))


@pytest.mark.parametrize(
    ("codec", "suffix", "options"),
    [
        ("libx264", "mp4", {"bf": "3", "g": "30"}),
        ("libx265", "mp4", {"x265-params": "bframes=3:keyint=30:log-level=error"}),
        ("mpeg4", "mp4", {"bf": "2", "g": "30"}),
        ("libvpx-vp9", "webm", {"g": "30"}),
        ("libx264", "mkv", {"bf": "3", "g": "30"}),
        # MPEG-TS seeks by decoding time: a seek can land past the keyframe asked for
        ("libx264", "ts", {"bf": "3", "g": "12"}),
    ],
)
def test_skipping_unreferenced_frames_leaves_the_wanted_ones_exact(
    tmp_path: Path, codec: str, suffix: str, options: dict[str, str]
) -> None:
    """decode_frames does not decode frames that are neither wanted nor referenced by others;
    what it returns is bit-for-bit what decoding every frame gives, for every codec here, and
    for wanted frames of every kind (keyframes, references, unreferenced B-frames)."""
    clip = tmp_path / f"clip.{suffix}"
    _moving_video(clip, codec, options)
    info = probe(clip)
    with av.open(str(clip)) as container:
        every = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(every) == info.frame_count == 60
    for wanted in ([0, 59], list(range(1, 60, 7)), [13, 14, 15, 46], list(range(60))):
        got = decode_frames(clip, info, wanted)
        assert sorted(got) == wanted
        assert all(np.array_equal(got[i], every[i]) for i in wanted), wanted
    with decode_module.decoding():  # another decode runs: this one decodes on one thread
        got = decode_frames(clip, info, list(range(60)))
    assert all(np.array_equal(got[i], every[i]) for i in range(60))


def test_decodes_share_the_cores(monkeypatch) -> None:
    """A decode alone uses every core; decodes that start while others run share them, one
    thread each once as many run as there are cores; a decode that fails gives its share back."""
    monkeypatch.setattr(decode_module.os, "cpu_count", lambda: 4)
    threads: list[int] = []
    with decode_module.decoding() as first:
        threads.append(first)
        with decode_module.decoding() as second, decode_module.decoding() as third:
            threads += [second, third]
            with decode_module.decoding() as fourth, decode_module.decoding() as fifth:
                threads += [fourth, fifth]
        with decode_module.decoding() as later:  # two run now, this one included
            threads.append(later)
    assert threads == [4, 2, 1, 1, 1, 2]
    with pytest.raises(MediaError), decode_module.decoding():
        raise MediaError("a corrupt video")
    with decode_module.decoding() as alone:
        assert alone == 4
    assert decode_module._DECODERS.running == 0

    seen: list[int] = []  # what the decoder was opened with
    real = decode_module._decode_from_here

    def recording(container, stream, wanted):  # type: ignore[no-untyped-def]
        seen.append(stream.codec_context.thread_count)
        return real(container, stream, wanted)

    monkeypatch.setattr(decode_module, "_decode_from_here", recording)
    info = probe(CLIPS[0])
    decode_frames(CLIPS[0], info, [0], max_side=32)
    with decode_module.decoding():
        decode_frames(CLIPS[0], info, [0], max_side=32)
    assert seen == [4, 2]


def test_frames_nothing_refers_to_are_not_decoded(tmp_path: Path) -> None:
    """An H.264 clip with B-frames: asking for its last frame decodes the references on the
    way there, not the B-frames nothing refers to."""
    clip = tmp_path / "clip.mp4"
    _moving_video(clip, "libx264", {"bf": "3", "b-pyramid": "none", "g": "60"})
    info = probe(clip)
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        wanted_pts = {info.pts[-1]}
        decoded = [f.pts for f in decode_module._decode_from_here(container, stream, wanted_pts)]
    assert decoded[-1] == info.pts[-1]
    assert len(decoded) < 0.5 * info.frame_count  # x264 without b-pyramid: B-frames unreferenced


def test_frame_content_and_order(tmp_path: Path) -> None:
    videos = {}
    for view in (0, 1):
        videos[view] = tmp_path / f"v{view}.mp4"
        write_mp4(videos[view], solid_frames(20, size=32, seed=view))
    media = MediaRef(videos)
    spec = FrameSpec(views=(0, 1), frames=4, sampler="interval", image_format="png")
    view_first = load_frames(media, spec)
    assert [(f.view, f.index) for f in view_first] == [
        (0, 0),
        (0, 5),
        (0, 10),
        (0, 15),
        (1, 0),
        (1, 5),
        (1, 10),
        (1, 15),
    ]
    time_first = load_frames(media, spec.with_(order="time-first"))
    assert [(f.view, f.index) for f in time_first] == [
        (0, 0),
        (1, 0),
        (0, 5),
        (1, 5),
        (0, 10),
        (1, 10),
        (0, 15),
        (1, 15),
    ]
    red = [np.asarray(decode_image(f.image.data))[16, 16, 0] for f in view_first[:4]]
    assert [abs(int(r) - 8 * i) <= 3 for r, i in zip(red, (0, 5, 10, 15), strict=True)] == [
        True
    ] * 4
    assert time_first[2].time_s == pytest.approx(5 / 24, abs=1e-3)


def test_window_cut_by_time(tmp_path: Path) -> None:
    path = tmp_path / "v.mp4"
    write_mp4(path, solid_frames(48), fps=24)  # 2 s
    frames = load_frames(
        MediaRef.single(path, 1.0, 2.0), FrameSpec(views=(0,), frames=3, sampler="interval")
    )
    assert [f.index for f in frames] == [24, 32, 40]
    assert frames[0].time_s == 0.0


def test_cache_second_load_decodes_nothing(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "a.mp4"
    write_mp4(src, solid_frames(30))
    cache = FrameCache(tmp_path / "cache")
    spec = FrameSpec(views=(0,), frames=5, sampler="interval")
    first = load_frames(MediaRef.single(src), spec, cache)

    def no_decoding(*args, **kwargs):
        raise AssertionError("decoded although cached")

    monkeypatch.setattr(frames_module, "decode_frames", no_decoding)
    monkeypatch.setattr(frames_module, "probe", no_decoding)
    copy = tmp_path / "renamed.mp4"  # content-addressed: a copy hits too
    shutil.copy(src, copy)
    second = load_frames(MediaRef.single(copy), spec, FrameCache(tmp_path / "cache"))
    assert [f.image.data for f in first] == [f.image.data for f in second]
    assert [f.time_s for f in first] == [f.time_s for f in second]


def test_cache_misses_for_other_size(tmp_path: Path) -> None:
    src = tmp_path / "a.mp4"
    write_mp4(src, solid_frames(10, size=64))
    cache = FrameCache(tmp_path / "cache")
    big = load_frames(
        MediaRef.single(src), FrameSpec(views=(0,), frames=2, sampler="interval"), cache
    )
    small = load_frames(
        MediaRef.single(src),
        FrameSpec(views=(0,), frames=2, max_side=16, sampler="interval"),
        cache,
    )
    assert decode_image(big[0].image.data).size == (64, 64)
    assert decode_image(small[0].image.data).size == (16, 16)


def test_bad_media_errors_name_the_file(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"garbage" * 100)
    with pytest.raises(MediaError, match="corrupt.mp4"):
        load_frames(MediaRef.single(corrupt), FrameSpec(views=(0,), sampler="interval"))
    with pytest.raises(MediaError, match="missing.mp4: view 0 video file not found"):
        load_frames(
            MediaRef.single(tmp_path / "missing.mp4"), FrameSpec(views=(0,), sampler="interval")
        )
    short = tmp_path / "short.mp4"
    write_mp4(short, solid_frames(3))
    with pytest.raises(MediaError, match=r"short.mp4: video has 3 frames, fewer than the 6"):
        load_frames(MediaRef.single(short), FrameSpec(views=(0,), frames=6, sampler="interval"))
    with pytest.raises(MediaError, match="view 8 is missing"):
        load_frames(MediaRef.single(short), FrameSpec(views=(0, 8), frames=2, sampler="interval"))


def test_frames_command_writes_jpegs(tmp_path: Path, capsys) -> None:
    clip = CLIPS[0]
    assert (
        main(
            [
                "frames",
                str(clip),
                "--frames",
                "4",
                "--sampler",
                "interval",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    written = sorted((tmp_path / "out").glob("*.jpg"))
    assert len(written) == 4
    info = probe(clip)
    step = info.frame_count // 4
    assert [int(p.stem.split("_frame")[1][:6]) for p in written] == [0, step, 2 * step, 3 * step]
    assert decode_image(written[0].read_bytes()).size == (info.width, info.height)
