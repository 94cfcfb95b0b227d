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

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.mmworld import loader as mmworld
from vidbench.benchmarks.mmworld.fields import AVERAGE, DISCIPLINES, FACETS, FLAGS
from vidbench.benchmarks.mmworld.judge import judge_call
from vidbench.benchmarks.mmworld.loader import meta
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
from vidbench.tasks.tally import ColumnTally, ResultsTally

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
        return meta(sample)["labels"]

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
        return dict(zip(meta(sample)["labels"], sample.options, strict=True))

    def _judged(self, parsed: str | None) -> bool:
        mode = self.options.scoring
        return mode == "judge-all" or (mode == "judge-fallback" and parsed is None)

    def judge_calls(self, sample: Sample, reply: str) -> list[ModelCall[bool]]:
        if not self._judged(self._parse(sample, reply)):
            return []
        answer = strip_end_mark(reply)
        if self.options.judge_input == "processed":
            answer = official_post_processing(answer)
        return [
            judge_call(
                f"{sample.id}:judge",
                sample.question or "",
                meta(sample)["options_in_file"],
                sample.answer or "",
                answer,
                self.options.verdict_parser,
            )
        ]

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        parsed = self._parse(sample, reply)
        fields = meta(sample)
        groups = {"discipline": fields["discipline"]}
        if fields["facet"] is not None:
            groups["facet"] = fields["facet"]
        if "raters" in fields:
            groups["difficulty"] = difficulty(fields["raters"])
        flags: list[JsonValue] = [c for flag, c in FLAGS.items() if fields["flags"].get(flag)]
        details: dict[str, JsonValue] = {"video_id": fields["video_id"], FLAG_COLUMNS: flags}
        metrics: dict[str, float | None] = {CHANCE: 1 / len(fields["labels"])}
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
        said_right = verdict.value_as(bool)
        if said_right is None:
            why = f"the judge's replies were not yes/no (last: {_short(verdict)})"
            return SampleScore(
                parsed=parsed,
                gold=sample.answer,
                unparsed=unparsed,
                judge_reply=verdict.reply,  # the last one, whole (the detail shortens it)
                groups=groups,
                metrics=metrics,
                details=details,
                **no_verdict_fields(sample.id, verdict, why),
            )
        return SampleScore(
            outcome=graded(said_right, unparsed=unparsed),
            parsed=parsed,
            gold=sample.answer,
            unparsed=unparsed,
            judge_reply=verdict.reply,
            groups=groups,
            metrics=metrics,
            details=details | {"verdict": "yes" if verdict.value else "no"},
        )

    # --------------------------------------------------------------------------- aggregation
    def values_by_column(
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
        return self.values_by_column(scores, _correct)

    def results_tally(self) -> MMWorldTally:
        return MMWorldTally(self)


class MMWorldTally(ResultsTally):
    """MMWorld's additions to results.json, counted a batch of scores at a time: how it was
    scored, the columns again (kept for readers of `columns_unrounded`: the columns themselves
    are unrounded now), the exact expected accuracy of the random-choice baseline (for the
    columns shown) and Figure 4b's accuracy by discipline and difficulty."""

    def __init__(self, task: MMWorld) -> None:
        self.task = task
        self.judged = 0
        self.judged_yes = 0
        self.chance = ColumnTally()
        self.by_difficulty = DifficultyTally()

    def add(self, scores: Sequence[SampleScore]) -> None:
        judged = [s for s in scores if s.details.get("scored_by") == "judge"]
        self.judged += len(judged)
        self.judged_yes += sum(1 for s in judged if s.correct)
        self.chance.add(self.task.values_by_column(scores, lambda score: score.metrics.get(CHANCE)))
        self.by_difficulty.add(scores)

    def fields(self, values: Mapping[str, Sequence[float]]) -> dict[str, JsonValue]:
        options = self.task.options
        shown = self.task.table.shown_columns(values)
        return {
            "scoring": {
                "mode": options.scoring,
                "answer_parser": options.answer_parser,
                "verdict_parser": options.verdict_parser,
                "judge_input": options.judge_input,
                "prompt": options.prompt,
                "subtitles": options.subtitles,
                "subset": options.subset,
                "judged": self.judged,
                "judged_yes": self.judged_yes,
            },
            # what Table 3's mean ± std over runs is computed from (report/runs.py)
            "columns_unrounded": {
                c: 100 * sum(values[c]) / len(values[c]) if values[c] else None for c in shown
            },
            "chance": {c: self.chance.percent(c) for c in shown},
            "difficulty_by_discipline": self.by_difficulty.fields(),
        }


def _correct(score: SampleScore) -> float | None:
    return None if score.correct is None else float(score.correct)


def flag_columns(score: SampleScore) -> list[str]:
    """The annotation-flag columns a question counts in (the flags set on it)."""
    flags = score.details.get(FLAG_COLUMNS)
    return [f for f in flags if isinstance(f, str)] if isinstance(flags, list) else []


class DifficultyTally:
    """Figure 4b: accuracy (percent) and count per discipline and human difficulty level, for the
    questions that have rater results (empty when none do), counted a batch at a time."""

    def __init__(self) -> None:
        self.right: Counter[tuple[str, str]] = Counter()
        self.asked: Counter[tuple[str, str]] = Counter()

    def add(self, scores: Sequence[SampleScore]) -> None:
        for score in scores:
            level, discipline, correct = (
                score.group("difficulty"),
                score.group("discipline"),
                score.correct,
            )
            if level is None or discipline is None or correct is None:
                continue
            self.asked[discipline, level] += 1
            self.right[discipline, level] += int(correct)

    def fields(self) -> dict[str, JsonValue]:
        found: dict[str, JsonValue] = {}
        for discipline in TABLE3:
            levels: dict[str, JsonValue] = {
                level: {"accuracy": 100 * self.right[discipline, level] / n, "n": n}
                for level in DIFFICULTY
                if (n := self.asked[discipline, level])
            }
            if levels:
                found[discipline] = levels
        return found


def _short(verdict: CallResult[object]) -> str:
    reply = verdict.reply or ""
    return repr(reply[:80] + ("..." if len(reply) > 80 else ""))
