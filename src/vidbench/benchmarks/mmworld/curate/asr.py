"""The ASR stage: one transcript with segment timestamps per video (MMWorld paper, section 3.2).

Transcripts are cached under `$VIDBENCH_CACHE/asr/` (default ~/.cache/vidbench/asr), keyed by a
hash of the video file's bytes, the Whisper model's identity and the settings that decide the
text (language, beam size, VAD, compute type), so a copied or renamed video is not transcribed
again and an edited one, another model or other settings are. Each video's outcome is one of:

- `ok`: segments `[{start, end, text}]` (seconds) and their text;
- `empty`: the audio holds no recognisable speech (no audio-only questions can come from it);
- `no-audio`: the file has no audio stream (skipped, with that reason);
- `error`: the file could not be opened or decoded (the message names it; tried again next run).
Only `ok` and `empty` are cached. With `out`, each outcome is written to `OUT/<video_id>.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

import av
from pydantic import JsonValue

from vidbench.benchmarks.mmworld.curate.videos import VideoEntry
from vidbench.benchmarks.mmworld.curate.whisper import AsrSettings, Whisper
from vidbench.core.errors import MediaError
from vidbench.core.files import write_atomic
from vidbench.media.cache import cache_root, file_digest
from vidbench.progress import progress_bar
from vidbench.runner.keys import digest

AsrStatus = Literal["ok", "empty", "no-audio", "error"]
CACHE_VERSION = "asr-v1"
CACHE_LEAVES_OUT = ("video_id", "file", "text")  # a cached transcript: what was heard, not where


@dataclass(frozen=True)
class Transcript:
    video_id: str
    file: str
    status: AsrStatus
    segments: tuple[dict[str, JsonValue], ...] = ()
    language: str | None = None
    duration_s: float | None = None
    reason: str | None = None
    file_digest: str | None = None
    model: dict[str, JsonValue] = field(default_factory=dict)
    settings: dict[str, JsonValue] = field(default_factory=dict)
    cached: bool = False

    @property
    def text(self) -> str:
        return " ".join(str(s["text"]) for s in self.segments)

    def to_json(self) -> dict[str, JsonValue]:
        """Every field but `cached` (how this run got it, not what it is), and the text."""
        plain = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cached"}
        return plain | {"segments": list(self.segments), "text": self.text}


def audio_stream_count(path: Path) -> int:
    """How many audio streams the file has; MediaError when it cannot be opened."""
    try:
        with av.open(str(path)) as container:
            return len(container.streams.audio)
    except (av.FFmpegError, OSError, ValueError) as e:
        raise MediaError(f"{path}: cannot open ({e})") from e


class Transcriber:
    """Transcripts of videos, through the cache."""

    def __init__(self, settings: AsrSettings, cache_dir: Path | None = None) -> None:
        self.whisper = Whisper(settings)
        self.settings = settings
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root() / "asr"

    def _cache_file(self, file_hash: str) -> Path:
        key = digest(
            {
                "version": CACHE_VERSION,
                "file": file_hash,
                "model": self.whisper.identity,
                "settings": self.settings.key_fields(),
            }
        )
        return self.cache_dir / key[:2] / f"{key}.json"

    def transcript(self, video: VideoEntry) -> Transcript:
        video_id, file = video.video_id, str(video.path)
        try:
            if audio_stream_count(video.path) == 0:
                return Transcript(
                    video_id, file, status="no-audio", reason="the file has no audio stream"
                )
            file_hash = file_digest(video.path)
            cached = self._cache_file(file_hash)
            if cached.is_file():
                stored = json.loads(cached.read_text())
                stored["segments"] = tuple(stored["segments"])
                return Transcript(video_id, file, **stored, cached=True)
            found = self.whisper.transcribe(video.path)
        except (MediaError, av.FFmpegError, OSError, ValueError, RuntimeError) as e:
            said = str(e)  # a MediaError names the file already
            reason = said if str(video.path) in said else f"{video.path}: {said}"
            return Transcript(video_id, file, status="error", reason=reason)
        transcript = Transcript(
            video_id,
            file,
            status="ok" if found.segments else "empty",
            segments=tuple(s.as_dict() for s in found.segments),
            language=found.language,
            duration_s=round(found.duration_s, 3),
            reason=None if found.segments else "no speech recognised",
            file_digest=file_hash,
            model=self.whisper.identity,
            settings=self.settings.key_fields(),
        )
        kept = {k: v for k, v in transcript.to_json().items() if k not in CACHE_LEAVES_OUT}
        write_atomic(cached, json.dumps(kept).encode())
        return transcript

    def run(
        self,
        videos: Sequence[VideoEntry],
        out: Path | None = None,
        show_progress: bool = False,
    ) -> dict[str, Transcript]:
        """Every video's transcript, one after the other (Whisper uses every core it is given),
        each written to `out/<video_id>.json` as it is made."""
        results: dict[str, Transcript] = {}
        with progress_bar(disable=not show_progress) as progress:
            bar = progress.add_task("asr", total=len(videos))
            for video in videos:
                transcript = self.transcript(video)
                results[video.video_id] = transcript
                if out is not None:
                    text = json.dumps(transcript.to_json(), indent=1, ensure_ascii=False)
                    write_atomic(out / f"{video.video_id}.json", text.encode())
                progress.advance(bar)
        return results
