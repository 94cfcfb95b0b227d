"""MMWorld video QA (MMWorld paper sections 3-4, appendices B-C; this benchmark's README.md).

Scoring modes (task modifiers):
- `rule`: map the reply to a label with the answer parser; correct when it is the gold label.
  An unmapped reply is wrong and counted in `unparsed`. No judge.
- `judge-all` (default; the paper's main tables): every reply goes to the LLM judge with the
  official prompt; its yes/no verdict decides.
- `judge-fallback`: the parser first; only replies it cannot map go to the judge.
A judged sample whose verdict is missing, unreadable or failed is reported as an error
(status `judge`), never counted as wrong.

Protocol: `official` (modifier) = the script's answer post-processing and its "yes in reply"
verdict; `vidbench` (default) = the `letter-or-text` parser and the `yes-no` verdict parser
(parse.py, judge.py).

Columns: Table 3 (seven disciplines and the micro "Average"), then for the main set Table 4's
facets (plus Procedure Understanding) and one column per annotation flag (questions with the flag
set), then, when `human_raters.json` is supplied, Figure 4's difficulty levels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.mmworld import loader as mmworld
from vidbench.benchmarks.mmworld.fields import AVERAGE, DISCIPLINES, FACETS, FLAGS
from vidbench.benchmarks.mmworld.judge import judge_call
from vidbench.benchmarks.mmworld.parse import official_post_processing, parse_answer, strip_end_mark
from vidbench.benchmarks.mmworld.prompts import build_messages
from vidbench.core.messages import Message
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.judge import no_verdict_fields
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import SampleScore, graded
from vidbench.tasks.base import SharedAnswersTask
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.table import Table

SCORING_MODES = ("rule", "judge-all", "judge-fallback")
DIFFICULTY = ("Easy", "Medium", "Hard", "Expert")  # 3, 2, 1, 0 of 3 raters correct
TABLE3 = (*DISCIPLINES, AVERAGE)
# a score's metric: the chance a random choice among its options is right
CHANCE = "chance"
# a score's detail: the annotation-flag columns it counts in
FLAG_COLUMNS = "flags"


@dataclass(frozen=True)
class MMWorldOptions:
    subset: str = "main"  # main | audio | visual
    scoring: str = "judge-all"
    protocol: str = "vidbench"  # official | vidbench
    prompt: str = "open"  # open | api (prompts.py)
    subtitles: bool = False
    judge_input: str = "raw"  # raw reply | processed (the official post-processing's output)

    @property
    def answer_parser(self) -> str:
        return "official" if self.protocol == "official" else "letter-or-text"

    @property
    def verdict_parser(self) -> str:
        return "official" if self.protocol == "official" else "yes-no"


def difficulty(raters: Sequence[bool]) -> str:
    return DIFFICULTY[3 - sum(bool(r) for r in raters)]


class MMWorld(SharedAnswersTask):
    version = "1"

    def __init__(
        self,
        name: str,
        frame_spec: FrameSpec,
        generation: GenerationConfig,
        options: MMWorldOptions,
        answers_name: str | None = None,
    ) -> None:
        super().__init__(name, frame_spec, generation, options.protocol, answers_name)
        self.options = options
        self.uses_judge = options.scoring != "rule"
        main = options.subset == "main"
        groups: dict[str, tuple[str, ...]] = {"Table 3": TABLE3}
        if main:
            groups |= {"Table 4": FACETS, "Annotation flags": tuple(FLAGS.values())}
        self.table = Table(
            tuple(c for group in groups.values() for c in group),
            groups=groups,
            optional={"Difficulty (human raters)": DIFFICULTY},  # data with raters has them
        )

    # ----------------------------------------------------------------------------- inputs
    def load(self, data: Path) -> Loaded[Sample]:
        loaded = mmworld.load(data, self.options.subset)
        if not loaded.items and not loaded.problems:
            path, _ = mmworld.resolve(data)
            loaded.problems.append(
                Problem("", path, f"no questions of the {self.options.subset!r} subset")
            )
        return loaded

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        return build_messages(sample, frames, self.options.prompt, self.options.subtitles)

    def choices(self, sample: Sample) -> tuple[str, ...]:
        return tuple(sample.metadata["labels"])

    def settings(self) -> dict[str, JsonValue]:
        """What decides the model's answers (the plan key): the scoring mode and the parsers do
        not, so `mmworld:rule` and `mmworld:judge-all` share stored answers."""
        return {
            "task": self.answers_name,
            "version": self.version,
            "prompt": self.options.prompt,
            "subtitles": self.options.subtitles,
            "frame_spec": self.frame_spec.as_dict(),
            "generation": self.generation.as_dict(),
        }

    # ---------------------------------------------------------------------------- scoring
    def _parse(self, sample: Sample, reply: str) -> str | None:
        return parse_answer(reply, self._options(sample), self.options.answer_parser)

    @staticmethod
    def _options(sample: Sample) -> dict[str, str]:
        return dict(zip(sample.metadata["labels"], sample.options, strict=True))

    def _judged(self, parsed: str | None) -> bool:
        mode = self.options.scoring
        return mode == "judge-all" or (mode == "judge-fallback" and parsed is None)

    def judge_calls(self, sample: Sample, reply: str) -> list[ModelCall]:
        if not self._judged(self._parse(sample, reply)):
            return []
        answer = strip_end_mark(reply)
        if self.options.judge_input == "processed":
            answer = official_post_processing(answer)
        return [
            judge_call(
                f"{sample.id}:judge",
                sample.question or "",
                sample.metadata["options_in_file"],
                sample.answer or "",
                answer,
                self.options.verdict_parser,
            )
        ]

    def score(self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult]) -> SampleScore:
        parsed = self._parse(sample, reply)
        meta = sample.metadata
        groups = {"discipline": meta["discipline"]}
        if meta["facet"] is not None:
            groups["facet"] = meta["facet"]
        if "raters" in meta:
            groups["difficulty"] = difficulty(meta["raters"])
        flags: list[JsonValue] = [c for flag, c in FLAGS.items() if meta["flags"].get(flag)]
        details: dict[str, JsonValue] = {"video_id": meta["video_id"], FLAG_COLUMNS: flags}
        metrics: dict[str, float | None] = {CHANCE: 1 / len(meta["labels"])}
        unparsed = parsed is None
        if not self._judged(parsed):
            return SampleScore(
                outcome=graded(parsed == sample.answer, unparsed=unparsed),
                parsed=parsed,
                gold=sample.answer,
                unparsed=unparsed,
                groups=groups,
                metrics=metrics,
                details=details | {"scored_by": "rule"},
            )
        details["scored_by"] = "judge"
        item = f"{sample.id}:judge"
        verdict = verdicts.get(item, CallResult(item, "missing"))
        if not verdict.ok:
            why = f"the judge's replies were not yes/no (last: {_short(verdict)})"
            return SampleScore(
                parsed=parsed,
                gold=sample.answer,
                unparsed=unparsed,
                groups=groups,
                metrics=metrics,
                details=details,
                **no_verdict_fields(sample.id, verdict, why),
            )
        return SampleScore(
            outcome=graded(bool(verdict.value), unparsed=unparsed),
            parsed=parsed,
            gold=sample.answer,
            unparsed=unparsed,
            judge_reply=verdict.reply,
            groups=groups,
            metrics=metrics,
            details=details | {"verdict": "yes" if verdict.value else "no"},
        )

    # --------------------------------------------------------------------------- aggregation
    def _values(
        self, scores: Sequence[SampleScore], value: Callable[[SampleScore], float | None]
    ) -> dict[str, list[float]]:
        values: dict[str, list[float]] = {c: [] for c in self.table.all_columns}
        for score in scores:
            number = value(score)
            if number is None:
                continue
            targets = [AVERAGE, *score.groups.values(), *flag_columns(score)]
            for column in targets:
                if column in values:
                    values[column].append(number)
        return values

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return self._values(scores, _correct)

    def extra_results(self, scores: Sequence[SampleScore]) -> dict[str, JsonValue]:
        """MMWorld's additions to results.json: how it was scored, the columns again (kept for
        readers of `columns_unrounded`: the columns themselves are unrounded now) and the exact
        expected accuracy of the random-choice baseline (for the columns shown)."""
        values = self.column_values(scores)
        shown = self.table.shown_columns(values)
        chance = self._values(scores, lambda score: score.metrics.get(CHANCE))
        judged = [s for s in scores if s.details.get("scored_by") == "judge"]
        return {
            "scoring": {
                "mode": self.options.scoring,
                "answer_parser": self.options.answer_parser,
                "verdict_parser": self.options.verdict_parser,
                "judge_input": self.options.judge_input,
                "prompt": self.options.prompt,
                "subtitles": self.options.subtitles,
                "subset": self.options.subset,
                "judged": len(judged),
                "judged_yes": sum(1 for s in judged if s.correct),
            },
            # what Table 3's mean ± std over runs is computed from (report/runs.py)
            "columns_unrounded": {
                c: 100 * sum(values[c]) / len(values[c]) if values[c] else None for c in shown
            },
            "chance": {
                c: 100 * sum(chance[c]) / len(chance[c]) if chance[c] else None for c in shown
            },
            "difficulty_by_discipline": difficulty_by_discipline(scores),
        }


def _correct(score: SampleScore) -> float | None:
    return None if score.correct is None else float(score.correct)


def flag_columns(score: SampleScore) -> list[str]:
    """The annotation-flag columns a question counts in (the flags set on it)."""
    flags = score.details.get(FLAG_COLUMNS)
    return [f for f in flags if isinstance(f, str)] if isinstance(flags, list) else []


def difficulty_by_discipline(
    scores: Sequence[SampleScore],
) -> dict[str, JsonValue]:
    """Figure 4b: accuracy (percent) and count per discipline and human difficulty level, for the
    questions that have rater results (empty when none do)."""
    cells: dict[str, dict[str, list[float]]] = {}
    for score in scores:
        level, correct = score.groups.get("difficulty"), score.correct
        if level is None or correct is None:
            continue
        cells.setdefault(score.groups["discipline"], {}).setdefault(level, []).append(
            float(correct)
        )
    return {
        discipline: {
            level: {"accuracy": 100 * sum(v) / len(v), "n": len(v)}
            for level in DIFFICULTY
            if (v := by_level.get(level))
        }
        for discipline in TABLE3
        if (by_level := cells.get(discipline))
    }


def _short(verdict: CallResult) -> str:
    reply = verdict.reply or ""
    return repr(reply[:80] + ("..." if len(reply) > 80 else ""))
