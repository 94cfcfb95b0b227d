"""AutoEval-Video: open-ended video QA judged by per-instance rules (AutoEval-Video paper).

The model sees 8 (or 16) frames sampled uniformly over the clip (np.linspace over its frames,
both ends), then the question as the benchmark gives it (the paper gives no other model prompt).
Image-only models get the frames tiled into one image (paper section 7.1): `grid-1x8` for
8 frames in a row, `grid-4x4` for 16, and `grid-2x4-square` / `grid-4x4-square` padded with black
to a square for models that center-crop. The open-ended answer is stored; the rules judge
(rules.py) decides correctness under a named judge protocol (`robust`, the default, or
`official`); `judge autoeval-video` may ask the unified prompt instead (calls.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.messages import Message, Part, TextPart
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import CLIP_MAX_SIDE, FrameSpec, grid_cell_side
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import NO_ANSWER, SampleScore
from vidbench.scoring.rule_judge import Judgment
from vidbench.tasks.base import SharedAnswersTask, Task
from vidbench.tasks.problems import Loaded, Problem
from vidbench.tasks.registry import TaskEntry, TaskRequest
from vidbench.tasks.table import Table
from vidbench.tasks.tally import ResultsTally

FRAME_VARIANTS = (
    "frames-8",
    "frames-16",
    "grid-1x8",
    "grid-4x4",
    "grid-2x4-square",
    "grid-4x4-square",
)
VARIANTS = (*FRAME_VARIANTS, *rules.PROTOCOLS)
DEFAULT_SPEC = FrameSpec(views=(0,), frames=8, sampler="linspace", max_side=CLIP_MAX_SIDE)


def frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
    """`frames-N` (frames sampled) and `grid-RxC[-square]` (tile them into one image, its cells
    small enough for the grid to fit in GRID_MAX_SIDE pixels)."""
    kind, _, arg = modifier.partition("-")
    if kind == "frames" and arg.isdigit():
        return spec.with_(frames=int(arg))
    if kind == "grid" and arg:
        return spec.with_(grid=arg, max_side=grid_cell_side(arg, spec.max_side))
    return None


def make(request: TaskRequest) -> Task:
    """The task for `autoeval-video[:MODIFIERS]`; a non-frame modifier names the judge protocol."""
    modifiers = request.modifiers
    unknown = [m for m in modifiers if m not in rules.PROTOCOLS]
    if unknown or len(modifiers) > 1:
        raise ConfigError(
            f"{request.name}: unknown or repeated task variant {(unknown or modifiers)[0]!r}; "
            f"known: {', '.join(VARIANTS)}"
        )
    protocol = rules.get_protocol(modifiers[0] if modifiers else rules.DEFAULT_PROTOCOL)
    generation = GenerationConfig(temperature=0.0, max_tokens=512)
    return AutoEvalVideo(request.name, request.spec, generation, protocol, request.frames_name)


class AutoEvalVideo(SharedAnswersTask):
    version = "1"
    table = Table(rules.COLUMNS)
    uses_judge = True

    def __init__(
        self,
        name: str,
        frame_spec: FrameSpec,
        generation: GenerationConfig,
        judge_protocol: rules.JudgeProtocol,
        answers_name: str | None = None,
        prompt: JudgePrompt | None = None,
    ) -> None:
        super().__init__(name, frame_spec, generation, judge_protocol.name, answers_name)
        self.judge_protocol = judge_protocol
        # asks per unreadable judge reply, as the protocol says (the judge stage reads it)
        self.judge_attempts = judge_protocol.attempts
        self.prompt = prompt or JudgePrompt("rules", judge_protocol)

    def load(self, data: Path) -> Loaded[Sample]:
        return autoeval_video.load(data)

    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        return autoeval_video.iter_instances(data)

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        parts: list[Part] = [frame.image for frame in frames]
        parts.append(TextPart(sample.question or ""))
        return (Message("user", tuple(parts)),)

    def _asks_judge(self, reply: str) -> bool:
        return not (rules.is_empty(reply) and self.judge_protocol.empty == "wrong")

    def judge_calls(self, sample: Sample, reply: str) -> list[ModelCall[Judgment]]:
        if not self._asks_judge(reply):
            return []
        try:
            return [self.prompt.call(sample.id, sample, reply)]
        except DataError:  # the prompt cannot be made (no reference): `score` names it
            return []

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        groups = {rules.DIMENSION: str(sample.metadata[rules.DIMENSION])}
        unaskable = self._unaskable(sample, reply)
        if unaskable is not None:
            return SampleScore(
                outcome=NO_ANSWER, status="data", status_detail=unaskable, groups=groups
            )
        if not self._asks_judge(reply):
            return rules.empty_outcome(groups)
        verdict = verdicts.get(sample.id, CallResult(sample.id, "missing"))
        return rules.outcome(verdict, self.judge_protocol, groups, rules.is_empty(reply))

    def _unaskable(self, sample: Sample, reply: str) -> str | None:
        if not self._asks_judge(reply):
            return None
        try:
            self.prompt.call(sample.id, sample, reply)
        except DataError as e:
            return str(e)
        return None

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return rules.column_values(scores)

    def results_tally(self) -> AutoEvalTally:
        return AutoEvalTally(self)


class AutoEvalTally(ResultsTally):
    """The judge protocol and prompt, and the counts behind the denominators (rules.summary,
    added up a batch of scores at a time)."""

    def __init__(self, task: AutoEvalVideo) -> None:
        self.task = task
        self.counts = Counter(rules.summary([]))  # every count, 0 until a score adds to it

    def add(self, scores: Sequence[SampleScore]) -> None:
        self.counts.update(rules.summary(scores))

    def fields(self, values: Mapping[str, Sequence[float]]) -> dict[str, JsonValue]:
        return {
            "judge_prompt": self.task.prompt.kind,
            "judge_protocol": self.task.judge_protocol.as_dict(),
            **self.counts,
        }


# frames-8/16, grid-1x8/4x4/2x4-square/4x4-square, and the judge protocol (robust by default, or
# official), e.g. autoeval-video:frames-16+grid-4x4.
TASKS: dict[str, TaskEntry] = {
    "autoeval-video": TaskEntry(make, DEFAULT_SPEC, frame_modifier, VARIANTS),
}
VARIANT_FAMILIES = {"grid-RxC": "frames tiled into one R x C image (-square: padded to a square)"}
