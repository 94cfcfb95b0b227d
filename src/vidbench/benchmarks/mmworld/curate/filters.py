"""Filtering generated questions, so each subset tests the one modality it claims to.

The MMWorld paper builds Synthetic I from audio alone and Synthetic II from visual content alone
(section 3.2, Table 2) and its main-set questions "could not be correctly answered without video
input" (section 3.1). vidbench checks every candidate by asking models to answer it from one
source at a time, exactly as an evaluated model would see it:

- blind: the question and options only. Answered correctly: dropped (a blind question).
- its own modality (audio: the transcript, to a text model; visual: the keyframes): answered
  wrongly: dropped (the source does not support the gold answer).
- the other modality (audio: the keyframes; visual: the transcript): answered correctly:
  dropped (the question leaks across modalities). A visual question about a video with no
  speech passes this check without a call: there is nothing to answer from.

A check whose replies never give an option is dropped as `filter reply unparsed`; a check whose
call failed leaves the question `undecided` (left out of the output, asked again next run).
Blind checks run first; only questions that pass them are checked further.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vidbench.benchmarks.mmworld import fields
from vidbench.benchmarks.mmworld.curate.asr import Transcript
from vidbench.benchmarks.mmworld.curate.candidates import SubsetCandidate
from vidbench.benchmarks.mmworld.curate.funnel import FilterCounts
from vidbench.benchmarks.mmworld.curate.generation import LABEL, PACKAGE
from vidbench.benchmarks.mmworld.curate.keyframes import Keyframes
from vidbench.benchmarks.mmworld.parse import parse_answer
from vidbench.core.messages import Message, Part, TextPart
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.prompt_files import load_prompt

PROMPT_FILE = "answer_check.v1.txt"
CHECK_GENERATION = GenerationConfig(temperature=0.0, max_tokens=64)
PARSER = "letter-or-text"  # a label, or the text of one option
NOTES = {
    "blind": " without the video (none is available)",
    "transcript": " using only this transcript of the video's speech",
    "keyframes": " using only the video frames above",
}
OTHER = {"audio": "keyframes", "visual": "transcript"}
OWN = {"audio": "transcript", "visual": "keyframes"}


def check_call(
    candidate: SubsetCandidate, source: str, evidence: Sequence[Part] = ()
) -> ModelCall[str]:
    """Ask for the answer of `candidate` from one source: blind, transcript or keyframes."""
    template = load_prompt(PACKAGE, PROMPT_FILE, LABEL)
    text = template.render(
        evidence="".join(p.text for p in evidence if isinstance(p, TextPart)),
        evidence_note=NOTES[source],
        question=candidate.question,
        options="\n".join(f"{k}. {v}" for k, v in candidate.options.items()),
    )
    images = tuple(p for p in evidence if not isinstance(p, TextPart))
    message = Message("user", (*images, TextPart(text)))

    def parse(reply: str) -> str | None:  # full-width "（b）" as "(b)": a model writing Chinese
        return parse_answer(unicodedata.normalize("NFKC", reply), candidate.options, PARSER)

    item = f"{candidate.id}:{source}"
    return ModelCall(item, (message,), template.version, parse, CHECK_GENERATION)


def transcript_evidence(transcript: Transcript) -> tuple[Part, ...]:
    text = fields.transcript(list(transcript.segments)) or ""
    return (TextPart(f"Transcript of the video's speech:\n{text}\n\n"),)


@dataclass
class Decision:
    status: str  # kept | dropped | undecided
    reason: str | None = None
    answers: dict[str, str | None] = field(default_factory=dict)  # source -> label given


def _failed(verdict: CallResult[str]) -> Decision | None:
    if verdict.status in ("error", "missing"):
        return Decision("undecided", f"filter call failed: {verdict.error or verdict.status}")
    if verdict.status == "unparsed":
        return Decision("dropped", "filter reply unparsed")
    return None


def decide_blind(candidate: SubsetCandidate, verdict: CallResult[str]) -> Decision | None:
    """The outcome when the blind check settles it, else None (go on checking)."""
    failed = _failed(verdict)
    if failed is not None:
        return failed
    if verdict.value == candidate.answer:
        return Decision("dropped", "blind: answerable from the question alone")
    return None


def decide(
    candidate: SubsetCandidate,
    own: CallResult[str],
    other: CallResult[str] | None,
    answers: dict[str, str | None],
) -> Decision:
    """The outcome of the modality checks (`other` None: nothing to answer from)."""
    subset = candidate.subset
    for verdict in (own, other):
        failed = _failed(verdict) if verdict is not None else None
        if failed is not None:
            failed.answers = answers
            return failed
    if own.value != candidate.answer:
        return Decision("dropped", f"{subset}: not answerable from the {OWN[subset]}", answers)
    if other is not None and other.value == candidate.answer:
        reason = f"{subset}: answerable from the {OTHER[subset]} alone"
        return Decision("dropped", reason, answers)
    return Decision("kept", None, answers)


@dataclass
class FilterPlan:
    """The modality checks for the candidates that passed the blind check."""

    text_calls: list[ModelCall[str]] = field(default_factory=list)  # transcript checks
    vision_calls: list[ModelCall[str]] = field(default_factory=list)  # keyframe checks
    decided: dict[str, Decision] = field(default_factory=dict)  # settled without these calls


def plan_modality_checks(
    survivors: Sequence[SubsetCandidate],
    transcripts: Mapping[str, Transcript],
    keyframes: Mapping[str, Keyframes],
) -> FilterPlan:
    plan = FilterPlan()
    for candidate in survivors:
        transcript = transcripts.get(candidate.video_id)
        frames = keyframes.get(candidate.video_id)
        has_speech = transcript is not None and transcript.status == "ok"
        if frames is None or not frames.ok:
            plan.decided[candidate.id] = Decision("dropped", "keyframes unavailable: unchecked")
            continue
        plan.vision_calls.append(check_call(candidate, "keyframes", frames.images()))
        if has_speech and transcript is not None:
            plan.text_calls.append(
                check_call(candidate, "transcript", transcript_evidence(transcript))
            )
        elif candidate.subset == "audio":
            plan.decided[candidate.id] = Decision("dropped", "no transcript: unchecked")
    return plan


def filter_counts(
    candidates: Sequence[SubsetCandidate], decisions: Mapping[str, Decision], subsets: Sequence[str]
) -> dict[str, FilterCounts]:
    """Per subset: candidates checked, kept, dropped by reason, undecided."""
    counts: dict[str, FilterCounts] = {}
    for subset in subsets:
        mine = [decisions[c.id] for c in candidates if c.subset == subset]
        dropped = Counter(d.reason for d in mine if d.status == "dropped" and d.reason)
        counts[subset] = {
            "checked": len(mine),
            "kept": sum(1 for d in mine if d.status == "kept"),
            "dropped": dict(sorted(dropped.items())),
            "undecided": sum(1 for d in mine if d.status == "undecided"),
        }
    return counts
