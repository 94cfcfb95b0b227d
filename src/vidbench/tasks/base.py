"""What a task is: which samples, how a prompt is built, how a reply is scored and aggregated."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from vidbench.core.errors import VidbenchError, code_of
from vidbench.core.files import Json
from vidbench.core.messages import Message
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import SampleScore
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.table import Table
from vidbench.tasks.tally import ResultsTally


class Task(ABC):
    """A benchmark protocol with its settings fixed (a named variant of it).

    `judge_calls` says what an LLM judge must be asked about a reply (the `judge` stage asks,
    the store keeps the verdicts); `score` turns one reply and its verdicts into a `SampleScore`
    (scoring/outcome.py: its outcome, parsed answer, gold, groups, numbers and the benchmark's own
    fields); `column_values` maps each column of the paper's table (`table`) to the per-sample
    values whose mean (scaled as the table says) it reports, read from those scores.
    """

    name: str
    # the title of its tables (a declared benchmark's own title); None: the name
    title: str | None = None
    version: str
    protocol: str
    frame_spec: FrameSpec
    generation: GenerationConfig
    table: Table
    # Some scores come from an LLM judge (the judge stage needs --judge) ...
    uses_judge: bool = False
    # ... unless these judge columns are optional: without --judge they are left empty.
    judge_optional: bool = False
    # Asks per unreadable judge reply when the task's protocol fixes it (None: --judge-attempts).
    judge_attempts: int | None = None
    # The data a task brings itself (a declared benchmark's folder): --data may be left out.
    own_data: Path | None = None

    @abstractmethod
    def load(self, data: Path) -> Loaded[Sample]: ...

    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        """The samples and problems of `load`, one at a time: a task whose loader can read its
        data a record at a time overrides this, so a run holds a batch of samples, not all
        (runner/samples.py). By default: `load`'s samples, then its problems."""
        return self.load(data).stream()

    def reviewed(self, data: Path) -> dict[str, frozenset[str]]:
        """Items people reviewed after an audit and kept as they are, as the data records it:
        id -> the audit's flag kinds they saw (`vidbench audit` shows those flags as reviewed,
        not open). None by default."""
        return {}

    def preflight(self) -> None:  # noqa: B027 - optional hook; most tasks need nothing
        """Check what scoring will need (metric models, packages) before any model call; raise
        ConfigError naming what is missing and how to provide it."""

    @abstractmethod
    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]: ...

    def choices(self, sample: Sample) -> tuple[str, ...]:
        """Option labels a baseline may pick from (empty for open-ended tasks)."""
        return ()

    def judge_calls(self, sample: Sample, reply: str) -> Sequence[ModelCall[object]]:
        """What an LLM judge must be asked about this reply (none for rule-scored tasks)."""
        return ()

    @abstractmethod
    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        """What this reply scores; `verdicts` holds this sample's judge_calls' verdicts (each
        value read with `verdict.value_as(TYPE)`, the type the call's parser returns). The
        score's `outcome` says how it counts (correct, wrong or unscored, and why: the helpers of
        scoring/outcome.py make it); a task that cannot score the answer it has says so in its
        `status` and `status_detail`."""

    def score_all(
        self, items: Sequence[tuple[Sample, str, Mapping[str, CallResult[object]]]]
    ) -> list[SampleScore]:
        """Every answered sample at once, for metrics that need the whole set (corpus statistics,
        batched models); by default sample by sample."""
        return [self.score(*item) for item in items]

    @abstractmethod
    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]: ...

    def corpus_columns(self, scores: Sequence[SampleScore]) -> dict[str, float | None]:
        """Columns reported as one number that is not a mean of per-sample values (already
        scaled; no confidence interval), e.g. corpus BLEU."""
        return {}

    def results_tally(self) -> ResultsTally | None:
        """Task-specific fields for results.json (e.g. chance levels, counts), gathered a batch
        of scores at a time (tasks/tally.py): a run of any size then holds none of its rows.
        None by default: `extra_results` gives them."""
        return None

    def extra_results(self, scores: Sequence[SampleScore]) -> Mapping[str, Json]:
        """Task-specific fields for results.json from every scored row at once. A task may
        override this instead of `results_tally` (simpler to write, but the report then holds
        all its rows, as for `corpus_columns`). By default: the `results_tally`'s fields over
        `scores` (none without one)."""
        tally = self.results_tally()
        if tally is None:
            return {}
        tally.add(scores)
        return tally.fields(self.column_values(scores))

    def settings(self) -> Mapping[str, Json]:
        """What identifies this task's prompts and scoring in the store and in results."""
        return {
            "task": self.name,
            "version": self.version,
            "protocol": self.protocol,
            "frame_spec": self.frame_spec.as_dict(),
            "generation": self.generation.as_dict(),
        }


class SharedAnswersTask(Task):
    """A task whose variants that differ only in scoring share the model's answers: its settings
    name it by `answers_name` (the name without the scoring modifiers; by default the name) and
    leave the protocol out, so re-scoring a run under another protocol reuses them."""

    def __init__(
        self,
        name: str,
        frame_spec: FrameSpec,
        generation: GenerationConfig,
        protocol: str,
        answers_name: str | None = None,
    ) -> None:
        self.name = name
        self.answers_name = answers_name or name
        self.frame_spec = frame_spec
        self.generation = generation
        self.protocol = protocol

    def settings(self) -> Mapping[str, Json]:
        answers = {k: v for k, v in super().settings().items() if k != "protocol"}
        answers["task"] = self.answers_name
        return answers


Returned = TypeVar("Returned")


def code_failed(task: Task, method: str, error: BaseException) -> str:
    """What is said of a task's own code (a plugin's) that raised: the task, where its code is,
    the method and the error."""
    return f"task {task.name} ({code_of(task)}): {method} raised {error!r}"


def call_task_code(
    task: Task, method: str, call: Callable[[], Returned], error: Callable[[str], Exception]
) -> Returned:
    """`call()`, one of the task's own methods; an exception it raises becomes `error` of what
    `code_failed` says, a VidbenchError (the code's own word: a DataError about a sample, a
    ConfigError) is raised as it is."""
    try:
        return call()
    except VidbenchError:
        raise
    except Exception as e:
        raise error(code_failed(task, method, e)) from e
