"""Question generation (MMWorld paper, section 3.2, "QA Generation": a model writes questions and
answers from the video frames and transcripts).

Audio-only questions (Synthetic Subset I) come from the transcript alone, text only; visual-only
questions (Synthetic Subset II) from the keyframes alone, images only. Each is one call to the
generator model through the model-call plumbing (runner/model_calls.py): stored in the output
folder's store, never asked twice, a reply without JSON asked again up to the attempt bound and then
counted as unparsed. A video that cannot give a subset its input (no audio stream, an empty
transcript, no keyframes, no discipline tag) is skipped for that subset with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from vidbench.benchmarks.mmworld import fields
from vidbench.benchmarks.mmworld.curate.asr import Transcript
from vidbench.benchmarks.mmworld.curate.candidates import (
    SubsetCandidate,
    SubsetReply,
    candidates,
    parse_generation,
)
from vidbench.benchmarks.mmworld.curate.funnel import GenerationCounts
from vidbench.benchmarks.mmworld.curate.keyframes import Keyframes
from vidbench.benchmarks.mmworld.curate.videos import VideoEntry
from vidbench.core.messages import ImagePart, user
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.prompt_files import PromptFile, load_prompt

PACKAGE = "vidbench.benchmarks.mmworld.curate"
LABEL = "mmworld-curate"
PROMPT_FILES = {"audio": "audio_questions.v1.txt", "visual": "visual_questions.v1.txt"}
SUBSETS = ("audio", "visual")
GENERATION = GenerationConfig(temperature=0.0, max_tokens=2048)


def prompt(filename: str) -> PromptFile:
    return load_prompt(PACKAGE, filename, LABEL)


def subdiscipline_note(video: VideoEntry) -> str:
    return f' (subdiscipline "{video.subdiscipline}")' if video.subdiscipline else ""


def _generation_call(
    subset: str, video: VideoEntry, count: int, images: Sequence[ImagePart], **inputs: object
) -> ModelCall[SubsetReply]:
    """The generator's call for one video and subset: the subset's prompt asking `count`
    questions in the video's discipline, its own `inputs` filled in, after `images`."""
    template = prompt(PROMPT_FILES[subset])
    text = template.render(
        discipline=video.discipline,
        subdiscipline_note=subdiscipline_note(video),
        count=count,
        **inputs,
    )
    item = f"{subset}/{video.video_id}:generate"
    return ModelCall(item, (user(*images, text),), template.version, parse_generation, GENERATION)


def audio_call(video: VideoEntry, transcript: Transcript, count: int) -> ModelCall[SubsetReply]:
    text = fields.transcript(list(transcript.segments))
    return _generation_call("audio", video, count, (), transcript=text)


def visual_call(video: VideoEntry, keyframes: Keyframes, count: int) -> ModelCall[SubsetReply]:
    frame_count = len(keyframes.frames)
    return _generation_call("visual", video, count, keyframes.images(), frame_count=frame_count)


def skip_reason(
    subset: str, video: VideoEntry, transcript: Transcript | None, keyframes: Keyframes | None
) -> str | None:
    """Why a video gives no questions of a subset, or None when it can."""
    if video.discipline is None:
        return "no discipline tag"
    if subset == "audio":
        if transcript is None:
            return "no transcript"
        if transcript.status != "ok":
            return {"no-audio": "no audio stream", "empty": "empty transcript"}.get(
                transcript.status, "asr failed"
            )
        return None
    if keyframes is None or not keyframes.ok:
        return "keyframes failed"
    return None


@dataclass
class GenerationPlan:
    """The calls to make, the questions asked of each, and per subset the videos skipped with
    their reasons."""

    count: int
    calls: list[ModelCall[SubsetReply]] = field(default_factory=list)
    skipped: dict[str, Counter[str]] = field(
        default_factory=lambda: {s: Counter() for s in SUBSETS}
    )
    details: list[dict[str, JsonValue]] = field(default_factory=list)


def plan_generation(
    videos: Sequence[VideoEntry],
    transcripts: Mapping[str, Transcript],
    keyframes: Mapping[str, Keyframes],
    subsets: Sequence[str],
    count: int,
) -> GenerationPlan:
    plan = GenerationPlan(count)
    for video in videos:
        transcript = transcripts.get(video.video_id)
        frames = keyframes.get(video.video_id)
        for subset in subsets:
            reason = skip_reason(subset, video, transcript, frames)
            if reason is not None:
                plan.skipped[subset][reason] += 1
                plan.details.append({"video_id": video.video_id, "subset": subset, "skip": reason})
            elif subset == "audio" and transcript is not None:
                plan.calls.append(audio_call(video, transcript, count))
            elif frames is not None:
                plan.calls.append(visual_call(video, frames, count))
    return plan


def collect(
    plan: GenerationPlan, verdicts: Mapping[str, CallResult[SubsetReply]], seed: int
) -> tuple[list[SubsetCandidate], dict[str, GenerationCounts], list[dict[str, JsonValue]]]:
    """Candidates from the generator's verdicts, the stage's counts per subset, and a line per
    video that gave nothing (skipped, unparsed reply, failed call) for the record."""
    found: list[SubsetCandidate] = []
    counts: dict[str, GenerationCounts] = {
        s: {
            "skipped": dict(plan.skipped[s]),
            "calls": 0,
            "ok": 0,
            "unparsed": 0,
            "error": 0,
            "questions": 0,
            "malformed": 0,
            "duplicates": 0,
            "extra": 0,
            "candidates": 0,
        }
        for s in SUBSETS
    }
    problems: list[dict[str, JsonValue]] = list(plan.details)
    for call in plan.calls:
        subset, _, rest = call.item.partition("/")
        video_id = rest.rsplit(":", 1)[0]
        verdict = verdicts[call.item]
        count = counts[subset]
        count["calls"] += 1
        if verdict.status == "ok":
            count["ok"] += 1
        elif verdict.status == "unparsed":
            count["unparsed"] += 1
        else:  # failed, or not asked
            count["error"] += 1
        generated = verdict.value
        if generated is None:
            detail = verdict.error or f"no JSON questions in the reply: {(verdict.reply or '')!r}"
            problems.append({"video_id": video_id, "subset": subset, verdict.status: detail[:300]})
            continue
        made = candidates(subset, video_id, generated, seed, plan.count)
        count["questions"] += len(generated.questions)
        count["malformed"] += len(generated.malformed)
        count["duplicates"] += made.duplicates
        count["extra"] += made.extra
        count["candidates"] += len(made.candidates)
        if generated.malformed:
            problems.append(
                {"video_id": video_id, "subset": subset, "malformed": list(generated.malformed)}
            )
        found.extend(made.candidates)
    return found, counts, problems
