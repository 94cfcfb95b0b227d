"""The task of a declared benchmark: its rows, its prompt, its scoring (scoring.py), its table
(table.py), all as its benchmark.toml says (spec.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.custom import decisions, fields, loader
from vidbench.benchmarks.custom import scoring as rules
from vidbench.benchmarks.custom.names import split_name
from vidbench.benchmarks.custom.spec import Spec
from vidbench.benchmarks.custom.table import CHANCE, OVERALL, GroupedTable, column_values
from vidbench.core.messages import Message, Part, TextPart
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.choices import option_letters
from vidbench.scoring.judge import no_verdict_fields
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import NO_GOLD, Outcome, SampleScore, graded, verdict_unparsed
from vidbench.scoring.rule_judge import Judgment
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.tally import ColumnTally, ResultsTally

# An unreadable reply the spec leaves out of the denominators (`unparsed = "drop"`).
LEFT_OUT_UNPARSED = Outcome(kind="unscored", reason="unparsed")


class DeclaredTask(Task):
    """A benchmark.toml's task. `parser` may differ from the spec's (a `:PARSER` variant), which
    re-scores stored answers: it is not part of `settings()`."""

    version = "1"

    def __init__(self, name: str, spec: Spec, folder: Path, frame_spec: FrameSpec, parser: str):
        self.name = name
        variants = split_name(name).variants
        self.title = f"{spec.title} ({variants})" if variants else spec.title
        self.spec = spec
        self.own_data = folder
        self.frame_spec = frame_spec
        self.generation = GenerationConfig(temperature=spec.temperature, max_tokens=spec.max_tokens)
        self.parser = parser
        self.protocol = parser if spec.multiple_choice else spec.scoring
        self.uses_judge = spec.uses_judge
        self.judge_attempts = spec.judge_attempts if spec.uses_judge else None
        self.table = GroupedTable((OVERALL,), group_fields=spec.groups)

    def load(self, data: Path) -> Loaded[Sample]:
        return loader.load(self.spec, data)

    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        return loader.iter_load(self.spec, data)

    def reviewed(self, data: Path) -> dict[str, frozenset[str]]:
        """The rows the decisions file keeps after review (decisions.py); its problems are the
        loader's to report."""
        path = decisions.decisions_path(self.spec, data)
        return decisions.kept(decisions.read_decisions(path)[0]) if path is not None else {}

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        """The frames (each view's preceded by "Video K:" when a row has several videos), then
        the prompt; the system prompt first when the benchmark has one."""
        parts: list[Part] = []
        view = None
        for frame in frames:
            if self.spec.views > 1 and frame.view != view:
                view = frame.view
                parts.append(TextPart(f"Video {frame.view + 1}:"))
            parts.append(frame.image)
        parts.append(TextPart(loader.prompt_text(self.spec, sample)))
        system = (Message("system", (TextPart(self.spec.system),)),) if self.spec.system else ()
        return (*system, Message("user", tuple(parts)))

    def choices(self, sample: Sample) -> tuple[str, ...]:
        return tuple(option_letters(len(sample.options))) if sample.options else ()

    def settings(self) -> dict[str, JsonValue]:
        """What decides the model's answers: the benchmark's name, prompt, frames and generation,
        not its folder (a moved benchmark keeps its stored answers) nor its scoring."""
        return {
            "task": f"custom:{self.spec.name}",
            "version": self.version,
            "prompt": self.spec.prompt,
            "system": self.spec.system,
            "option_format": self.spec.option_format,
            "frame_spec": self.frame_spec.as_dict(),
            "generation": self.generation.as_dict(),
        }

    # ---------------------------------------------------------------------------- scoring
    def judge_calls(self, sample: Sample, reply: str) -> list[ModelCall[Judgment]]:
        if not self.uses_judge or not loader.has_gold(sample):
            return []
        return [rules.judge_call(self.spec, sample, reply)]

    def _groups(self, sample: Sample) -> dict[str, str | list[str]]:
        """Each group field's value (a list when the row has several: it counts in each)."""
        values = fields.group_values(sample.metadata, self.spec.groups)
        return {f: v[0] if len(v) == 1 else v for f, v in values.items()}

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        groups = self._groups(sample)
        if not loader.has_gold(sample):  # asked, not scored: the gold is kept elsewhere
            parsed = rules.parse_choice(reply, sample, self.parser) if sample.options else None
            return SampleScore(outcome=NO_GOLD, parsed=parsed, groups=groups)
        if self.spec.multiple_choice:
            parsed = rules.parse_choice(reply, sample, self.parser)
            counted = parsed is not None or self.spec.unparsed == "wrong"
            return SampleScore(
                outcome=graded(parsed == sample.answer, parsed is None)
                if counted
                else LEFT_OUT_UNPARSED,
                parsed=parsed,
                gold=sample.answer,
                unparsed=parsed is None,
                groups=groups,
                metrics={CHANCE: 1 / len(sample.options)},
            )
        gold = " | ".join(sample.references)
        if not self.uses_judge:
            correct = rules.matches(reply, sample.references, self.spec.scoring)
            return SampleScore(outcome=graded(correct), gold=gold, groups=groups)
        item = rules.judge_item(sample)
        verdict = verdicts.get(item, CallResult(item, "missing"))
        if verdict.absent:
            return SampleScore(gold=gold, groups=groups, **no_verdict_fields(sample.id, verdict))
        judgment = verdict.value_as(Judgment)
        if judgment is None:  # no reply ended in 1 or 0: counted wrong, and shown as unparsed
            return SampleScore(
                outcome=verdict_unparsed(counted_wrong=True),
                gold=gold,
                unparsed=True,
                judge_reply=verdict.reply,
                groups=groups,
                details={"verdict": None},
            )
        return SampleScore(
            outcome=graded(judgment.verdict == 1),
            gold=gold,
            judge_reply=verdict.reply,
            groups=groups,
            details={"verdict": judgment.verdict, "reason": judgment.reason},
        )

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return column_values(scores, self.spec.groups)

    def results_tally(self) -> DeclaredTally:
        return DeclaredTally(self)


class DeclaredTally(ResultsTally):
    """How a declared benchmark was scored, and (multiple choice) the random-choice baseline's
    expected accuracy per column, counted a batch of scores at a time."""

    def __init__(self, task: DeclaredTask) -> None:
        self.task = task
        self.no_gold = 0
        self.not_counted = 0
        self.chance = ColumnTally()

    def add(self, scores: Sequence[SampleScore]) -> None:
        spec = self.task.spec
        self.no_gold += sum(1 for s in scores if s.outcome == NO_GOLD)
        self.not_counted += sum(1 for s in scores if s.outcome == LEFT_OUT_UNPARSED)
        if spec.multiple_choice:
            self.chance.add(column_values(scores, spec.groups, lambda s: s.metrics.get(CHANCE)))

    def fields(self, values: Mapping[str, Sequence[float]]) -> dict[str, JsonValue]:
        spec = self.task.spec
        extra: dict[str, JsonValue] = {
            "benchmark": {"name": spec.name, "title": spec.title, "kind": spec.kind}
        }
        if not spec.multiple_choice:
            return extra | {"scoring": {"method": spec.scoring, "no_gold": self.no_gold}}
        return extra | {
            "scoring": {
                "parser": self.task.parser,
                "unparsed": spec.unparsed,
                "not_counted": self.not_counted,
                "no_gold": self.no_gold,
            },
            "chance": {
                c: None if (p := self.chance.percent(c)) is None else round(p, 2)
                for c in self.task.table.shown_columns(values)
            },
        }
