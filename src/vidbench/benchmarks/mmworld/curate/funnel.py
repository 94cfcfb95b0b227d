"""The `curate mmworld` funnel in report/funnel.py's shape: what each stage (videos, asr,
keyframes, generation, filter, output; queries on its own) took in, kept and dropped, with the
reasons, per subset where a stage has subsets, and what its model calls cost. Written to
OUT/funnel.json and printed as a table at the end of a run, so nothing dropped goes unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from pydantic import JsonValue

from vidbench.benchmarks.mmworld.curate.asr import Transcript
from vidbench.report.funnel import StageCount
from vidbench.runner.store import Store

STAGES = ("queries", "videos", "asr", "keyframes", "generation", "filter", "output")
# prompt file name -> the stage that asks it (a prompt version is "LABEL/NAME.vN")
STAGE_OF_PROMPT = {
    "queries": "queries",
    "audio_questions": "generation",
    "visual_questions": "generation",
    "answer_check": "filter",
}


def usage_by_stage(store: Store) -> dict[str, dict[str, int]]:
    """Requests and tokens in/out stored in this output folder, per stage (every run's)."""
    stages: dict[str, dict[str, int]] = {}
    for version, usage in store.call_usage_by_version().items():
        name = version.rpartition("/")[2].split(".v")[0]
        stage = STAGE_OF_PROMPT.get(name, "other")
        total = stages.setdefault(stage, {"requests": 0, "input_tokens": 0, "output_tokens": 0})
        for key, value in usage.items():
            total[key] += value
    return stages


def _nonzero(counts: Mapping[str, int]) -> dict[str, int]:
    return {k: n for k, n in counts.items() if n}


def listing_stage(listed: int, bad: int) -> StageCount:
    return StageCount(listed + bad, listed, _nonzero({"bad entry": bad}), unit="videos")


def asr_stage(transcripts: Mapping[str, Transcript]) -> StageCount:
    """Videos in, videos with a transcript; the rest by why (no speech, no audio, failed)."""
    statuses = [t.status for t in transcripts.values()]
    dropped = {status: statuses.count(status) for status in ("empty", "no-audio", "error")}
    cached = sum(1 for t in transcripts.values() if t.cached)
    return StageCount(
        len(statuses),
        statuses.count("ok"),
        _nonzero(dropped),
        unit="videos",
        notes=_nonzero({"from the cache": cached}),
    )


def keyframes_stage(ok: int, failed: int) -> StageCount:
    return StageCount(ok + failed, ok, _nonzero({"unreadable": failed}), unit="videos")


class GenerationCounts(TypedDict):
    """One subset's generation (generation.collect): videos skipped by why, calls by status,
    questions read, malformed, repeated and past the number asked for, candidates kept."""

    skipped: dict[str, int]
    calls: int
    ok: int
    unparsed: int
    error: int
    questions: int
    malformed: int
    duplicates: int
    extra: int  # past the number asked for
    candidates: int


class QueryCounts(TypedDict):
    """`curate mmworld queries`: calls made, answered, unreadable, failed; queries written; the
    subdisciplines left without queries."""

    calls: int
    ok: int
    unparsed: int
    error: int
    queries: int
    failed: list[dict[str, JsonValue]]


class FilterCounts(TypedDict):
    """One subset's checks (filters.filter_counts): checked, kept, dropped by why, undecided."""

    checked: int
    kept: int
    dropped: dict[str, int]
    undecided: int


def generation_stage(counts: Mapping[str, GenerationCounts]) -> StageCount:
    """Per subset (generation.collect's counts): questions generated (well-formed or not), kept
    as candidates, dropped as malformed, duplicate or past the number asked for; replies with
    no readable questions, failed calls and videos the subset skipped hold no question to
    count."""
    parts = {}
    for subset, c in counts.items():
        uncounted = {"replies unparsed": c["unparsed"], "call errors": c["error"]}
        uncounted |= {f"videos skipped: {why}": n for why, n in c["skipped"].items()}
        parts[subset] = StageCount(
            c["questions"] + c["malformed"],
            c["candidates"],
            _nonzero(
                {
                    "malformed": c["malformed"],
                    "duplicate": c["duplicates"],
                    "more than asked for": c["extra"],
                }
            ),
            unit="questions",
            uncounted=_nonzero(uncounted),
            notes=_nonzero({"calls": c["calls"]}),
        )
    return StageCount.summed(parts, "questions")


def filter_stage(counts: Mapping[str, FilterCounts]) -> StageCount:
    """Per subset (filters.filter_counts'): checked, kept, dropped by reason, undecided."""
    parts = {
        subset: StageCount(
            c["checked"], c["kept"], dict(c["dropped"]), unit="questions", pending=c["undecided"]
        )
        for subset, c in counts.items()
    }
    return StageCount.summed(parts, "questions")


def output_stage(written: Mapping[str, Mapping[str, int]]) -> StageCount:
    """Per subset: the questions written to mmworld.json, and over how many videos."""
    parts = {
        subset: StageCount(
            c["questions"],
            c["questions"],
            unit="questions",
            notes=_nonzero({"videos": c["videos"]}),
        )
        for subset, c in written.items()
    }
    return StageCount.summed(parts, "questions")


def queries_stage(counts: QueryCounts) -> StageCount:
    """Subdisciplines asked, those with queries; unreadable replies dropped, failed calls asked
    again by the next run."""
    return StageCount(
        counts["calls"],
        counts["ok"],
        _nonzero({"unparsed": counts["unparsed"]}),
        unit="subdisciplines",
        pending=counts["error"],
        notes={"queries": counts["queries"]},
    )
