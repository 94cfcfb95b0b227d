"""Speech recognition speed: the real-time factor (seconds of compute per second of audio) of the
Whisper model the `asr` extra ships (or --asr-model PATH), on speech of known duration made with
espeak-ng and muxed into an mp4 as the curation reads it. Also the model load time, the first
(cold) transcription and the cached answer.

    python bench/asr.py [--seconds 60] [--threads 0] [--beam-size 5] [--compute-type int8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from vidbench.benchmarks.mmworld.curate.asr import Transcriber
from vidbench.benchmarks.mmworld.curate.videos import VideoEntry
from vidbench.benchmarks.mmworld.curate.whisper import AsrSettings
from vidbench.testing.speech import shape_frames, speak, wav_seconds, write_talking_video

SENTENCES = (
    "Welcome back to the workshop.",
    "Today we will build a wooden birdhouse with a hammer, nails and a small saw.",
    "First, measure the front panel and mark a circle for the entrance hole.",
    "Cut slowly along the line, and sand the edges so the birds do not hurt themselves.",
    "Next, nail the side panels to the base, keeping the corners square.",
    "The roof overhangs the front by two centimetres to keep the rain out.",
)


def make_video(folder: Path, seconds: float) -> tuple[Path, float]:
    """An mp4 whose audio is at least `seconds` of speech; its speech duration."""
    text, said = [], 0.0
    while said < seconds:
        text.extend(SENTENCES)
        wav = speak(" ".join(text), folder / "speech.wav")
        said = wav_seconds(wav)
    fps = 4
    frames = shape_frames(int(said * fps) + fps, (200, 60, 40), size=(96, 128))
    video = folder / "speech.mp4"
    write_talking_video(video, frames, wav, fps)
    return video, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="speech to transcribe")
    parser.add_argument("--asr-model", help="CTranslate2 Whisper folder (default: shipped)")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: default)")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--compute-type", default="int8")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    settings = AsrSettings(
        model=args.asr_model,
        beam_size=args.beam_size,
        compute_type=args.compute_type,
        device=args.device,
        threads=args.threads,
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        video, said = make_video(folder, args.seconds)
        transcriber = Transcriber(settings, folder / "cache")
        print(f"model: {transcriber.whisper.identity['name']} ({transcriber.whisper.folder})")
        print(f"speech: {said:.1f} s; cores: {os.cpu_count()}; settings: {settings}")
        start = time.perf_counter()
        transcriber.whisper.load()  # timed apart from the decoding
        print(f"model load: {time.perf_counter() - start:.2f} s")
        entry = VideoEntry("speech", video)
        start = time.perf_counter()
        transcript = transcriber.transcript(entry)
        cold = time.perf_counter() - start
        words = len(transcript.text.split())
        print(f"transcribe: {cold:.2f} s for {said:.1f} s of speech, {words} words")
        print(f"real-time factor: {cold / said:.3f} ({said / cold:.1f}x faster than real time)")
        start = time.perf_counter()
        cached = transcriber.transcript(entry)
        assert cached.cached
        print(f"cached: {1000 * (time.perf_counter() - start):.1f} ms (file hash + cache read)")


if __name__ == "__main__":
    main()
