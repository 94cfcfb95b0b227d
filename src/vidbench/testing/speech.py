"""Videos with spoken audio, made offline, for tests and the ASR benchmark.

`speak` synthesises speech with Debian's `espeak-ng` (a command-line program, no network, no
model download); `write_talking_video` muxes frames (H.264) and a WAV file (AAC) into one mp4
with PyAV, so the pixels can show something other than what is said.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import av
import numpy as np

from vidbench.core.errors import ConfigError

AUDIO_RATE = 16_000  # Whisper's input rate; AAC at 16 kHz mono is plenty for speech


def speak(text: str, path: Path, words_per_minute: int = 140) -> Path:
    """Write `text` spoken by espeak-ng to the WAV file `path`."""
    program = shutil.which("espeak-ng")
    if program is None:
        raise ConfigError("espeak-ng is not installed: apt-get install espeak-ng")
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [program, "-s", str(words_per_minute), "-w", str(path), text],
        check=True,
        capture_output=True,
    )
    return path


def wav_seconds(path: Path) -> float:
    """The duration of an audio file, from its decoded samples."""
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return samples / stream.rate


def write_talking_video(
    path: Path, frames: Sequence[np.ndarray], wav: Path | None, fps: int = 12
) -> None:
    """An mp4 of `frames` (HxWx3 uint8, even sides) with the audio of `wav` (none when None).

    The video lasts as long as the frames; give enough frames to cover the speech."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w", format="mp4") as out:
        video = out.add_stream("libx264", rate=fps)
        video.width, video.height = frames[0].shape[1], frames[0].shape[0]
        video.pix_fmt = "yuv420p"
        video.codec_context.thread_count = 1
        audio = out.add_stream("aac", rate=AUDIO_RATE) if wav is not None else None
        if audio is not None:
            audio.layout = "mono"
        for array in frames:
            out.mux(video.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
        out.mux(video.encode(None))
        if audio is not None and wav is not None:
            resampler = av.AudioResampler(format="fltp", layout="mono", rate=AUDIO_RATE)
            with av.open(str(wav)) as source:
                for frame in source.decode(audio=0):
                    for resampled in resampler.resample(frame):
                        out.mux(audio.encode(resampled))
            for resampled in resampler.resample(None):
                out.mux(audio.encode(resampled))
            out.mux(audio.encode(None))


def shape_frames(
    count: int, colour: tuple[int, int, int], size: tuple[int, int] = (96, 128)
) -> list[np.ndarray]:
    """`count` frames of a disc of `colour` moving left to right on a grey background."""
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width]
    frames = []
    for t in range(count):
        frame = np.full((height, width, 3), 128, np.uint8)
        cx = int(20 + (width - 40) * t / max(1, count - 1))
        frame[(xs - cx) ** 2 + (ys - height // 2) ** 2 <= 18**2] = colour
        frames.append(frame)
    return frames
