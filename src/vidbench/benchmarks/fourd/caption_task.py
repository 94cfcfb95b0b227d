"""4D-Bench object captioning (paper section 4.1, Table 2; supplement Fig. IV).

Frames: the QA task's FrameSpec (views 1, 8, 16; six frames per view; view-first) and its
modifiers. The sampler is `interval` (`total // 6` steps from frame 0): the official caption
scripts of GPT-4o, Gemini, Qwen2-VL and InternVL2 sample with that (myutils.get_video_uniform_
frames); only the LLaVA scripts use `np.linspace`, which `--sampler linspace` selects.
Prompt: Fig. IV with the image counts of the FrameSpec, its five example captions, images first.
Answer: the text after the first "caption:" (any case), stripped, as the official
`handle_llm_caption_no_index` does; a reply without it is scored whole and flagged (`unparsed`).
Scoring: the nine Table 2 columns (scoring/captions), all objects at once (`score_all`); the GPT
columns need `--judge SPEC`, and without one they are empty and results say why.
Variants: `4dbench-caption` (protocol vidbench), `:official`, `:coco` (scoring/captions/metrics.py),
plus the 4D-Bench frame modifiers. Metric models and the CIDEr df file come from environment
variables (VIDBENCH_CIDER_DF, VIDBENCH_BERT_MODEL, VIDBENCH_BERT_LAYERS, VIDBENCH_SBERT_MODEL,
VIDBENCH_SBERT_RUNTIME, VIDBENCH_CAPTION_DEVICE); the results record them.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue, TypeAdapter

from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.benchmarks.fourd.captions import gpt_judges
from vidbench.benchmarks.fourd.captions import table as caption_table
from vidbench.benchmarks.fourd.captions.rows import (
    HUMAN_PREFIX,
    CaptionRow,
    held_out,
    judge_references,
)
from vidbench.benchmarks.fourd.prompt import TIMESTAMPS_SENTENCE, frames_sentence, image_parts
from vidbench.core.errors import ConfigError
from vidbench.core.files import Json, as_int
from vidbench.core.messages import Message, TextPart
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.frame import Frame
from vidbench.media.spec import FrameSpec
from vidbench.scoring.captions.metrics import (
    AUTOMATIC,
    ENV_SETTINGS,
    CaptionMetricSettings,
    check_models,
    describe,
    df_source,
    score_captions,
)
from vidbench.scoring.judge import no_verdict_fields
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import NOT_GRADED, SampleScore
from vidbench.tasks.base import SharedAnswersTask, Task
from vidbench.tasks.problems import Loaded
from vidbench.tasks.registry import TaskRequest
from vidbench.tasks.table import Table

# 4D-Bench supplement Fig. IV: its paragraphs, the frames sentence filled from the FrameSpec.
CAPTION_PROMPT = "\n\n".join(
    (
        "I have multiple videos of the object captured from different angles. {frames}."
        "{timestamps} Your job is to generate one fluent caption for this multi-view video in "
        "English, provide a detailed description of the object's or character's appearance, "
        "including shape, color, texture, and any notable features. Additionally, describe the "
        "actions taking place, focusing on how the object or character moves and behaves "
        "throughout the scene. The caption should not describe the background. You must strictly "
        "return in the following format: caption: caption content. Here are some examples:",
        "Example 1: caption: A young woman with black hair wearing silver jumpsuit is lying on "
        "the floor and then gently rises.",
        "Example 2: caption: A military infantryman in green and brown camouflage gear holds a "
        "black pistol in his left hand and dances with his arms and legs moving first to the left "
        "then to the right.",
        "Example 3: caption: A 3D model of a fish pond with blue walls, and brown ground, a fish "
        "swims next to a creature that looks like an animal that is lying down.",
        "Example 4: caption: 3D model of a yellow emoji with closed eyes that sticks out its red "
        "tongue and moves from right to left.",
        "Example 5: caption: A man with brown hair, a moustache and sunglasses wears a green coat, "
        "black pants, a white shirt and a black tie walks straight then turns raising his right "
        "hand up.",
    )
)
MARKER = "caption:"
PROTOCOL_MODIFIERS = ("official", "coco")
# `given`: each answer is a caption made elsewhere (e.g. `--model predictions:FILE`), scored as
# it is; no `caption:` marker is looked for.
GIVEN = "given"
# a caption score's details: the caption scored and the references it was scored against
CAPTION = "caption"
REFERENCES = "references"


def extract_caption(reply: str) -> tuple[str, bool]:
    """(caption, found): the text after the first "caption:" (case-insensitive), stripped; or
    the whole reply unchanged and False when there is no such marker."""
    start = reply.lower().find(MARKER)
    if start == -1:
        return reply, False
    return reply[start + len(MARKER) :].strip(), True


def metric_settings_from_env(protocol: str) -> CaptionMetricSettings:
    chosen = {
        name: value
        for variable, name in ENV_SETTINGS.items()
        if (value := os.environ.get(variable))
    }
    given = {"protocol": protocol, "metrics": AUTOMATIC, "set_by": "environment", **chosen}
    return TypeAdapter(CaptionMetricSettings).validate_python(given)  # bert_layers: a number


@dataclass(frozen=True)
class CaptionSource:
    """Where the captions come from, when not from a model asked by this task: captions made
    elsewhere (`captions_given`: a reply is the caption itself), for some objects only
    (`objects`), or the Human row (`human_seed`: each object's held-out human caption is the
    answer, scored against its other captions)."""

    captions_given: bool = False
    objects: frozenset[str] | None = None
    human_seed: int | None = None


class FourDCaption(SharedAnswersTask):
    version = "1"
    # percent for the six automatic metrics, 0..5 for the judges
    table = Table(caption_table.COLUMNS, caption_table.SCALE)
    uses_judge = True  # GPT-Appearance / GPT-Action
    judge_optional = True  # the automatic metrics need no judge

    def __init__(
        self,
        name: str,
        frame_spec: FrameSpec,
        generation: GenerationConfig,
        metrics: CaptionMetricSettings,
        answers_name: str | None = None,
        source: CaptionSource | None = None,
    ) -> None:
        super().__init__(name, frame_spec, generation, metrics.protocol, answers_name)
        self.metrics = metrics
        self.source = source or CaptionSource()
        # every loaded object's references as its row scores them (plain CIDEr's document
        # frequencies without a df file: the same whichever objects are answered or selected)
        self.all_references: list[tuple[str, ...]] | None = None

    def preflight(self) -> None:
        """The metric packages, models and device, before any caption is asked for."""
        check_models(self.metrics)

    def load(self, data: Path) -> Loaded[Sample]:
        """The objects, each with the reference its judge draw picked (the draw walks every
        object of the data, as the official script does, before `source.objects` selects)."""
        loaded = fourd_bench.load_captions(data)
        uids = [s.id for s in loaded.items]
        seed = self.source.human_seed
        held = held_out(uids, seed=seed) if seed is not None else None
        drawn = gpt_judges.draw_references(uids, held_out=held)
        self.all_references = [
            _scored_references(s.references, held[s.id] if held else None) for s in loaded.items
        ]
        chosen = self.source.objects
        items = [
            dataclasses.replace(
                s,
                metadata={
                    **s.metadata,
                    "judge_reference": drawn[s.id],
                    **({"held_out": held[s.id]} if held else {}),
                },
            )
            for s in loaded.items
            if chosen is None or s.id in chosen
        ]
        return Loaded(items, loaded.problems)

    def prompt_text(self) -> str:
        return CAPTION_PROMPT.format(
            frames=frames_sentence(self.frame_spec, noun="images,"),
            timestamps=TIMESTAMPS_SENTENCE if self.frame_spec.timestamps else "",
        )

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        parts = [*image_parts(frames, self.frame_spec), TextPart(self.prompt_text())]
        return (Message("user", tuple(parts)),)

    # ------------------------------------------------------------------------------ scoring
    @property
    def _official(self) -> bool:
        return self.protocol == "official"

    def _caption(self, reply: str) -> tuple[str, bool]:
        """The caption in a reply, and whether it was found (a given caption always is)."""
        return (reply, True) if self.source.captions_given else extract_caption(reply)

    def _row(self, sample: Sample, reply: str) -> CaptionRow:
        caption, _ = self._caption(reply)
        mode = self.metrics.judge_references
        drawn = as_int(sample.metadata.get("judge_reference"))
        refs = sample.references
        held = as_int(sample.metadata.get("held_out"))
        if held is None:
            return CaptionRow(
                sample.id, sample.id, caption, refs, judge_references(refs, mode, drawn)
            )
        judged = judge_references(refs, mode, drawn, exclude=held)
        others = _scored_references(refs, held)
        return CaptionRow(HUMAN_PREFIX + sample.id, sample.id, caption, others, judged)

    def judge_calls(self, sample: Sample, reply: str) -> list[ModelCall[float]]:
        generation = (
            gpt_judges.OFFICIAL_GENERATION if self._official else gpt_judges.DEFAULT_GENERATION
        )
        return gpt_judges.judge_calls(
            self._row(sample, reply).judge_target(), not self._official, generation
        )

    def score_all(
        self, items: Sequence[tuple[Sample, str, Mapping[str, CallResult[object]]]]
    ) -> list[SampleScore]:
        """Every answered sample at once: the metrics need the whole set (one Java start, one
        model load, batched embeddings, document frequencies of all the references)."""
        rows = [self._row(sample, reply) for sample, reply, _ in items]
        scored = score_captions(
            [r.caption for r in rows],
            [r.references for r in rows],
            self.metrics,
            self.all_references,
        )
        scores = []
        for (sample, reply, verdicts), row, values in zip(
            items, rows, scored.per_object, strict=True
        ):
            tally = gpt_judges.JudgeTally()
            target = row.judge_target()
            judged = gpt_judges.object_scores(target, verdicts, tally)
            by_kind: dict[str, JsonValue] = {k: dict(v) for k, v in tally.by_kind().items()}
            details: dict[str, JsonValue] = {
                CAPTION: row.caption,
                REFERENCES: list(row.references),
                "judge_references": list[JsonValue](sorted(row.judge_references)),
                "judgments": dict(tally.as_dict()),
                "judgments_by_kind": by_kind,
            }
            # with a judge, an object missing any judgment is not scored at all (never a GPT
            # mean over fewer references, nor a row without its GPT columns)
            absent = gpt_judges.absent_verdict(target, verdicts) if verdicts else None
            if absent is not None:
                scores.append(
                    SampleScore(
                        unparsed=not self._caption(reply)[1],
                        metrics={**values, **judged},
                        details=details,
                        **no_verdict_fields(sample.id, absent),
                    )
                )
                continue
            scores.append(  # metrics, not right or wrong
                SampleScore(
                    outcome=NOT_GRADED,
                    unparsed=not self._caption(reply)[1],
                    metrics={**values, **judged},
                    details=details,
                )
            )
        return scores

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        """One sample alone (the score stage calls `score_all`)."""
        return self.score_all([(sample, reply, verdicts)])[0]

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return caption_table.column_values([score.metrics for score in scores])

    def corpus_columns(self, scores: Sequence[SampleScore]) -> dict[str, float | None]:
        """Columns not reported as a mean of per-sample values: GPT-Eval (the mean of the two
        judge columns) and, under the coco protocol, corpus BLEU@4 and METEOR."""
        corpus: dict[str, float] = {}
        if self.protocol == "coco" and scores:
            from vidbench.scoring.captions.coco import coco_scores

            cands = [caption_of(score) for score in scores]
            refs = [references_of(score) for score in scores]
            corpus = coco_scores(cands, refs, ["bleu", "meteor"]).corpus
        reported = caption_table.columns([score.metrics for score in scores], corpus)
        keep = [*caption_table.corpus_overrides(corpus), "GPT-Eval"]
        return {c: reported[c] for c in keep}

    def extra_results(self, scores: Sequence[SampleScore]) -> dict[str, Json]:
        judgments: Counter[str] = Counter()
        tally = gpt_judges.JudgeTally()
        for score in scores:
            judgments.update(_counts(score.details.get("judgments")))
            by_kind = score.details.get("judgments_by_kind")
            for kind, counts in (by_kind if isinstance(by_kind, dict) else {}).items():
                tally.counts.update({(kind, status): n for status, n in _counts(counts).items()})
        judged = judgments.get("ok", 0) + judgments.get("unparsed", 0) + judgments.get("error", 0)
        why = None
        if not judged:
            why = "not judged: give --judge SPEC (e.g. openai:gpt-4o) to fill the GPT columns"
        warnings: list[JsonValue] = list(tally.warnings(lenient=not self._official))
        return {
            "warnings": warnings,
            "caption_scoring": {
                **describe(self.metrics, df_source(len(scores), self.all_references)),
                "judge_references": self.metrics.judge_references,
                "judgments": dict(judgments),
                "gpt_columns": why or "judged",
                "unparsed_means": f"replies without {MARKER!r}, scored as the whole reply",
            },
        }


def _scored_references(refs: tuple[str, ...], held: int | None) -> tuple[str, ...]:
    """The references a caption is scored against: all of the object's, or (the Human row)
    the others than the one `held` out (1-based)."""
    return refs if held is None else tuple(r for i, r in enumerate(refs, start=1) if i != held)


def caption_of(score: SampleScore) -> str:
    """The caption a score is of (its `caption` detail)."""
    caption = score.details.get(CAPTION)
    return caption if isinstance(caption, str) else ""


def references_of(score: SampleScore) -> list[str]:
    """The references a caption was scored against (its `references` detail)."""
    refs = score.details.get(REFERENCES)
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def _counts(value: JsonValue) -> dict[str, int]:
    """A `{status: n}` detail (judgments), as counts."""
    if not isinstance(value, dict):
        return {}
    return {k: n for k, n in value.items() if isinstance(n, int)}


def make(request: TaskRequest) -> Task:
    protocols = [m for m in request.modifiers if m in PROTOCOL_MODIFIERS]
    unknown = [m for m in request.modifiers if m not in (*PROTOCOL_MODIFIERS, GIVEN)]
    if unknown:
        raise ConfigError(
            f"{request.name}: unknown task variant {unknown[0]!r}; scoring variants: "
            f"{', '.join((*PROTOCOL_MODIFIERS, GIVEN))} (and the 4D-Bench frame variants)"
        )
    if len(protocols) > 1:
        raise ConfigError(f"{request.name}: choose one scoring protocol, not {'+'.join(protocols)}")
    protocol = protocols[0] if protocols else "vidbench"
    generation = GenerationConfig(temperature=0.0, max_tokens=512)
    metrics = metric_settings_from_env(protocol)
    source = CaptionSource(captions_given=GIVEN in request.modifiers)
    return FourDCaption(
        request.name, request.spec, generation, metrics, request.frames_name, source
    )
