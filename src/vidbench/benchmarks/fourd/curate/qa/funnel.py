"""The QA funnel, as the 4D-Bench paper reports retention (section 3.3): per subtask, how many
questions were generated, failed to parse (by reason), were rejected by the validator (by
reason), were dropped by the blind filter, and were kept; plus the objects skipped, the gold
letter balance, and the calls, tokens and cost of every stage. Written to OUT/funnel.json (the
shared shape of report/funnel.py: the "qa" stage with a part per subtask, beside part 1's
stages; the paper's per-subtask table under "details") and OUT/funnel.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from pydantic import JsonValue

from vidbench.benchmarks.fourd.curate.funnel import QA_STAGES
from vidbench.benchmarks.fourd.curate.funnel import STAGES as PART_ONE
from vidbench.benchmarks.fourd.curate.qa.candidates import SUBTASKS
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_text
from vidbench.models.pricing import cost_of
from vidbench.report.funnel import Funnel, StageCount
from vidbench.runner.store import Store

STAGES = ("generate", "validate", "blind", "caption")

# One subtask's counts, named as funnel.json and funnel.md show them (see subtask_counts).
SubtaskCounts = TypedDict(
    "SubtaskCounts",
    {
        "objects": int,
        "call errors": int,
        "replies unparsed": int,
        "generated": int,
        "parse rejects": Counter[str],
        "candidates": int,
        "validator accepted": int,
        "validator rejects": Counter[str],
        "blind-dropped": int,
        "undecided": int,
        "kept": int,
    },
)
CountKey = Literal[
    "objects", "call errors", "replies unparsed", "generated", "candidates",
    "validator accepted", "blind-dropped", "undecided", "kept",
]  # fmt: skip
COUNT_KEYS: tuple[CountKey, ...] = (
    "objects", "call errors", "replies unparsed", "generated", "candidates",
    "validator accepted", "blind-dropped", "undecided", "kept",
)  # fmt: skip
ReasonKey = Literal["parse rejects", "validator rejects"]
REASON_KEYS: tuple[ReasonKey, ...] = ("parse rejects", "validator rejects")
UNCOUNTED: tuple[CountKey, ...] = ("replies unparsed", "call errors")  # no questions to count
TokenKey = Literal["requests", "input_tokens", "output_tokens"]
TOKEN_KEYS: tuple[TokenKey, ...] = ("requests", "input_tokens", "output_tokens")


class ObjectCounts(TypedDict, total=False):
    """The objects found and used, and those skipped by reason (empty before the first stage)."""

    layout: str
    found: int
    used: int
    skipped: dict[str, int]


class ModelUsage(TypedDict):
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: NotRequired[float | None]  # None: no price table, or no price for the model


class StageUsage(TypedDict):
    """A stage's calls, tokens and cost, in all and per model spec."""

    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    models: dict[str, ModelUsage]


# What the funnel holds (`QAFunnel.as_dict`), with `incomplete` (failed calls) after a run.
FunnelData = TypedDict(
    "FunnelData",
    {
        "objects": ObjectCounts,
        "subtasks": dict[str, SubtaskCounts],
        "total": SubtaskCounts,
        "letter balance": dict[str, dict[str, int]],
        "calls this run": dict[str, int],
        "usage": dict[str, StageUsage],
        "problems": list[dict[str, JsonValue]],
        "incomplete": NotRequired[int],
    },
)


def subtask_counts() -> SubtaskCounts:
    return {
        "objects": 0,  # objects asked for questions of this subtask
        "call errors": 0,  # generation calls that failed (asked again by the next run)
        "replies unparsed": 0,  # replies with no readable JSON block, after every attempt
        "generated": 0,  # questions in the replies that parsed
        "parse rejects": Counter(),  # reason -> questions rejected by the strict checks
        "candidates": 0,
        "validator accepted": 0,
        "validator rejects": Counter(),  # reason -> candidates
        "blind-dropped": 0,  # both blind models answered correctly
        "undecided": 0,  # a validator or blind call failed: asked again by the next run
        "kept": 0,
    }


@dataclass
class QAFunnel:
    objects: ObjectCounts = field(default_factory=lambda: ObjectCounts())
    subtasks: dict[str, SubtaskCounts] = field(
        default_factory=lambda: {s: subtask_counts() for s in SUBTASKS}
    )
    asked_now: Counter[str] = field(default_factory=Counter)  # stage -> calls sent this run
    letters: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: list[dict[str, JsonValue]] = field(default_factory=list)

    def as_dict(self, usage: dict[str, StageUsage]) -> FunnelData:
        subtasks = {s: _plain(c) for s, c in self.subtasks.items()}
        total = _plain(_sum(list(self.subtasks.values())))
        # every subtask asks about the same objects: the total is how many, not their sum
        total["objects"] = max((c["objects"] for c in self.subtasks.values()), default=0)
        return {
            "objects": self.objects,
            "subtasks": subtasks,
            "total": total,
            "letter balance": self.letters,
            "calls this run": {s: self.asked_now[s] for s in STAGES if s != "caption"},
            "usage": usage,
            "problems": self.problems,
        }

    def write(self, out: Path, store: Store) -> FunnelData:
        """OUT/funnel.json and OUT/funnel.md; the counts as funnel.md shows them."""
        data = self.as_dict(usage_by_stage(store))
        qa = StageCount.summed({s: _stage(c) for s, c in data["subtasks"].items()}, "questions")
        funnel = Funnel(
            {**part_one_stages(out), "qa objects": objects_stage(data["objects"]), "qa": qa},
            {stage: dict(usage) for stage, usage in data["usage"].items()},
            data["problems"],
            {
                "objects": dict(data["objects"]),
                "subtasks": {s: _as_json(c) for s, c in data["subtasks"].items()},
                "total": _as_json(data["total"]),
                "letter balance": dict(data["letter balance"]),
                "calls this run": dict(data["calls this run"]),
            },
        )
        funnel.write(out)
        write_text(out / "funnel.md", markdown(data))
        return data


def part_one_stages(out: Path) -> dict[str, StageCount]:
    """The stages of part 1 (render, motion, quality) in OUT/funnel.json when OUT is their
    folder, so `vidbench curate 4d funnel OUT` shows the "qa" stage after them."""
    try:
        stages = Funnel.read(out).stages
    except ConfigError:
        stages = {}  # a funnel.json of another shape: none of part 1's stages
    return {name: stages[name] for name in PART_ONE if name in stages and name not in QA_STAGES}


def objects_stage(objects: ObjectCounts) -> StageCount:
    """The objects found in the data folder, those used, and those skipped by reason (each
    named in the funnel's "problems", stage "objects"): the table shows them, not only the
    details."""
    skipped = dict(sorted(objects.get("skipped", {}).items()))
    return StageCount(objects.get("found", 0), objects.get("used", 0), skipped)


def _stage(counts: SubtaskCounts) -> StageCount:
    """One subtask's questions: generated, kept, dropped by reason (strict parsing, the
    validator, the blind filter); a reply no question was read from, or a failed call, holds no
    questions to count; an undecided one waits for the next run."""
    dropped = Counter(counts["parse rejects"]) + Counter(counts["validator rejects"])
    dropped["blind-dropped"] += counts["blind-dropped"]
    uncounted: dict[str, int] = {k: n for k in UNCOUNTED if (n := counts[k])}
    return StageCount(
        counts["generated"],
        counts["kept"],
        dict(sorted((+dropped).items())),
        unit="questions",
        uncounted=uncounted,
        pending=counts["undecided"],
    )


def _sum(parts: list[SubtaskCounts]) -> SubtaskCounts:
    total = subtask_counts()
    for part in parts:
        for key in COUNT_KEYS:
            total[key] += part[key]
        for reasons in REASON_KEYS:
            total[reasons] += part[reasons]
    return total


def _plain(counts: SubtaskCounts) -> SubtaskCounts:
    """The counts with each reason count in name order (as funnel.json lists them)."""
    plain = counts.copy()
    for reasons in REASON_KEYS:
        plain[reasons] = Counter(dict(sorted(counts[reasons].items())))
    return plain


def _as_json(counts: SubtaskCounts) -> dict[str, int | dict[str, int]]:
    """The counts with each reason count a plain dict: dataclasses.asdict (Funnel.document)
    would rebuild a Counter from its (key, count) pairs, counting the pairs."""
    reasons: dict[str, dict[str, int]] = {r: dict(counts[r]) for r in REASON_KEYS}
    numbers: dict[str, int] = {k: counts[k] for k in COUNT_KEYS}
    return {k: reasons[k] if k in reasons else numbers[k] for k in counts}  # the keys' order


def stage_of(version: str) -> str:
    """'fourd-qa/generate.v1+fourd-qa/subtask_motion.v1' -> 'generate'."""
    return version.split("+")[0].rpartition("/")[2].split(".v")[0]


def usage_by_stage(store: Store) -> dict[str, StageUsage]:
    """Calls, tokens and cost (VIDBENCH_PRICES; null without a table) per stage and model, over
    every run stored in this folder: what building this set cost."""
    stages: dict[str, StageUsage] = {}
    for version, judge, usage in store.call_usage_by_version_and_model():
        stage = stage_of(version)
        models = stages.setdefault(
            stage,
            {"requests": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "models": {}},
        )
        entry = models["models"].setdefault(
            judge, {"requests": 0, "input_tokens": 0, "output_tokens": 0}
        )
        for key in TOKEN_KEYS:
            entry[key] += usage[key]
            models[key] += usage[key]
    for totals in stages.values():
        for spec, used in totals["models"].items():
            cost = cost_of(spec, used)
            spent = used["cost_usd"] = None if cost is None else cost["total"]
            if totals["cost_usd"] is not None:
                totals["cost_usd"] = None if spent is None else totals["cost_usd"] + spent
    order = [*STAGES, *sorted(set(stages) - set(STAGES))]  # pipeline order
    return {stage: stages[stage] for stage in order if stage in stages}


# A flat Literal: mypy 2.4 reads a union of Literal aliases as a plain str TypedDict key.
Row = Literal[
    "objects", "call errors", "replies unparsed", "generated", "parse rejects", "candidates",
    "validator accepted", "validator rejects", "blind-dropped", "undecided", "kept",
]  # fmt: skip
ROWS: tuple[Row, ...] = (
    "objects",
    "call errors",
    "replies unparsed",
    "generated",
    "parse rejects",
    "candidates",
    "validator accepted",
    "validator rejects",
    "blind-dropped",
    "undecided",
    "kept",
)


def _cell(value: int | dict[str, int]) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k} {v}" for k, v in value.items()) or "0"
    return str(value)


def markdown(data: FunnelData) -> str:
    """funnel.md: one column per subtask and a total, then letters, usage and skipped objects."""
    columns = [*data["subtasks"], "Total"]
    counts: list[SubtaskCounts] = [*data["subtasks"].values(), data["total"]]
    lines = ["# 4D-Bench QA curation funnel", "", "| | " + " | ".join(columns) + " |"]
    lines.append("|---" * (len(columns) + 1) + "|")
    for row in ROWS:
        cells = [_cell(c[row]) for c in counts]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    kept, generated = data["total"]["kept"], data["total"]["generated"]
    retention = f"{kept / generated:.1%}" if generated else "n/a"
    lines += ["", f"Retention: {kept} kept of {generated} generated ({retention}).", ""]
    lines += ["## Gold letter balance", "", "| | A | B | C | D |", "|---|---|---|---|---|"]
    for name, letters in data["letter balance"].items():
        lines.append(f"| {name} | " + " | ".join(str(letters[x]) for x in "ABCD") + " |")
    lines += ["", "## Calls, tokens and cost per stage (every run in this folder)", ""]
    lines += ["| stage | requests | input tokens | output tokens | cost (USD) |", "|---" * 5 + "|"]
    for stage, usage in data["usage"].items():
        cost = "n/a" if usage["cost_usd"] is None else f"{usage['cost_usd']:.4f}"
        lines.append(
            f"| {stage} | {usage['requests']} | {usage['input_tokens']} | "
            f"{usage['output_tokens']} | {cost} |"
        )
    now = data["calls this run"]
    lines += ["", "Calls this run: " + ", ".join(f"{s} {n}" for s, n in now.items()) + ".", ""]
    objects = data["objects"]
    lines.append(
        f"Objects: {objects.get('found', 0)} found, {objects.get('used', 0)} used; "
        f"skipped: {_cell(objects.get('skipped', {}))}."
    )
    return "\n".join(lines) + "\n"
