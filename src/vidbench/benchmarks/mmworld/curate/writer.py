"""The output: the kept questions in the format `vidbench run mmworld-synth-audio` /
`mmworld-synth-visual` and `vidbench validate mmworld` read (the MMWorld loader).

OUT/mmworld.json is a list of video records, one per (subset, video) with kept questions:
    {video_id: "audio/<id>" or "visual/<id>", video_url, discipline, subdiscipline, subset,
     captions: [], transcript: [{start, end, text}], topic, source_file, questions: [...]}
each question {question, options{a..d}, answer (the option text), correct_answer_label,
requires_audio, requires_visual, question_only: false, candidate_id}. The video of
"audio/<id>" is linked (a symlink to the original file, a copy where links are not possible) at
OUT/audio/<id>/<id>.<ext>, the loader's layout, so one folder holds both subsets and a video
with questions in both appears once per subset.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.mmworld.curate.asr import Transcript
from vidbench.benchmarks.mmworld.curate.candidates import SubsetCandidate
from vidbench.benchmarks.mmworld.curate.videos import VideoEntry
from vidbench.core.files import Json, write_json

ANNOTATIONS = "mmworld.json"
SETTINGS_FILE = "settings.json"  # the curation's settings (pipeline.Curation.settings)


def link_video(source: Path, target: Path) -> None:
    """`target` pointing at `source` (replacing what was there); a copy when links fail."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    try:
        os.symlink(source.resolve(), target)
    except OSError:
        shutil.copy2(source, target)


def question_record(candidate: SubsetCandidate) -> dict[str, JsonValue]:
    return {
        "question": candidate.question,
        "options": dict(candidate.options),
        "answer": candidate.options[candidate.answer],
        "correct_answer_label": candidate.answer,
        "requires_audio": candidate.subset == "audio",
        "requires_visual": candidate.subset == "visual",
        "question_only": False,
        "candidate_id": candidate.id,
    }


def video_record(
    subset: str,
    video: VideoEntry,
    transcript: Transcript | None,
    questions: list[dict[str, JsonValue]],
) -> dict[str, Json]:
    return {
        "video_id": f"{subset}/{video.video_id}",
        "video_url": video.url or "",
        "discipline": video.discipline,
        "subdiscipline": video.subdiscipline,
        "subset": subset,
        "captions": [],
        "transcript": list(transcript.segments) if transcript and transcript.status == "ok" else [],
        "topic": video.topic,
        "source_file": str(video.path),
        "questions": questions,
    }


def write_subsets(
    out: Path,
    videos: Mapping[str, VideoEntry],
    kept: Sequence[SubsetCandidate],
    transcripts: Mapping[str, Transcript],
) -> dict[str, dict[str, int]]:
    """Write OUT/mmworld.json and link the videos; videos and questions per subset."""
    grouped: dict[tuple[str, str], list[dict[str, JsonValue]]] = {}
    for candidate in kept:
        grouped.setdefault((candidate.subset, candidate.video_id), []).append(
            question_record(candidate)
        )
    records = []
    for (subset, video_id), questions in sorted(grouped.items()):
        video = videos[video_id]
        link_video(video.path, out / subset / video_id / f"{video_id}{video.path.suffix.lower()}")
        records.append(video_record(subset, video, transcripts.get(video_id), questions))
    write_json(out / ANNOTATIONS, records, indent=1)
    return {
        subset: {
            "videos": sum(1 for s, _ in grouped if s == subset),
            "questions": sum(len(q) for (s, _), q in grouped.items() if s == subset),
        }
        for subset in ("audio", "visual")
    }
