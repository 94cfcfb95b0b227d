"""The curation stages in order, over one output folder (MMWorld paper, section 3.2, Figure 3).

    asr        OUT/transcripts/<video_id>.json
    keyframes  OUT/keyframes/<video_id>/*.jpg
    questions  asr + keyframes, then generation: OUT/candidates.jsonl (every generated question)
    all        questions, then the filters and the output: OUT/mmworld.json (+ video links),
               OUT/candidates.jsonl with each question's fate, OUT/funnel.json, and
               OUT/settings.json (the models, prompt versions and settings)

Every stage also writes OUT/videos.json (the listing and its problems) and OUT/funnel.json with
its stages, keeping those it did not run that an earlier command wrote there (`queries`; `asr`
when `keyframes` runs alone); a stage run alone leaves a funnel.json that holds later stages as
it is, and says so. `questions` and `all` run the stages before them; they cost nothing the
second time (transcripts and keyframes are cached by content, model replies are in
OUT/store.sqlite). Bad input (a video without audio, an undecodable file, an empty transcript, an
unreadable reply) is recorded and counted, and the run goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape

from vidbench.benchmarks.mmworld.curate import filters, generation
from vidbench.benchmarks.mmworld.curate.asr import Transcriber, Transcript
from vidbench.benchmarks.mmworld.curate.candidates import SubsetCandidate
from vidbench.benchmarks.mmworld.curate.funnel import (
    STAGES,
    asr_stage,
    filter_stage,
    generation_stage,
    keyframes_stage,
    listing_stage,
    output_stage,
    usage_by_stage,
)
from vidbench.benchmarks.mmworld.curate.keyframes import (
    DEFAULT_KEYFRAMES,
    DEFAULT_MAX_SIDE,
    Keyframes,
    keyframe_spec,
    select_keyframes,
)
from vidbench.benchmarks.mmworld.curate.videos import VideoEntry, list_videos
from vidbench.benchmarks.mmworld.curate.whisper import AsrSettings
from vidbench.benchmarks.mmworld.curate.writer import SETTINGS_FILE, write_subsets
from vidbench.benchmarks.mmworld.loader import VIDEO_EXTENSIONS
from vidbench.console import err
from vidbench.core.errors import ConfigError
from vidbench.core.files import Json, write_json, write_jsonl
from vidbench.media.cache import FrameCache
from vidbench.models.base import Model
from vidbench.models.registry import ModelChoice, ModelOptions, load_model
from vidbench.report.funnel import Funnel, StageCount, funnel_table, refuse_other_pipeline
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS, ask_in
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult, ModelCall

Value = TypeVar("Value")  # what a stage's calls parse to


@dataclass
class CurateConfig:
    videos: Path
    out: Path
    generator: ModelChoice | None = None  # needed by the generation stage
    filter_model: ModelChoice | None = None  # default: the generator
    text_model: ModelChoice | None = None  # default: the filter model
    discipline: str | None = None  # for videos without one
    subsets: tuple[str, ...] = generation.SUBSETS
    questions: int = 4  # asked of the generator per video and subset
    keyframes: int = DEFAULT_KEYFRAMES
    max_side: int | None = DEFAULT_MAX_SIDE
    asr: AsrSettings = field(default_factory=AsrSettings)
    attempts: int = DEFAULT_ATTEMPTS
    concurrency: int = 16
    seed: int = 0
    cache_dir: Path | None = None  # the frame cache
    asr_cache_dir: Path | None = None
    progress: bool = True


class Curation:
    def __init__(self, config: CurateConfig, console: Console | None = None) -> None:
        self.config = config
        self.console = console or err
        self.out = Path(config.out)
        refuse_other_pipeline(self.out, STAGES, "curate mmworld")
        listing = list_videos(config.videos, config.discipline, self.out)
        self.videos: list[VideoEntry] = listing.items
        self.funnel = Funnel()
        self._stage("videos", listing_stage(len(self.videos), len(listing.problems)))
        self._problems("videos", [{"entry": p.record, "problem": str(p)} for p in listing.problems])
        for problem in listing.problems:
            self.console.print(f"[yellow]skipped[/] {escape(str(problem))}")
        if not self.videos:  # a wrong or empty folder: not a run of zero videos that looks done
            why = "every entry above was skipped" if listing.problems else "the list names none"
            if Path(config.videos).is_dir():
                why = f"no {', '.join(VIDEO_EXTENSIONS)} file in it or below it"
            raise ConfigError(f"{config.videos}: no videos to curate ({why})")
        self._models: dict[tuple[str, str], Model] = {}
        self.out.mkdir(parents=True, exist_ok=True)
        listed = {
            "videos": [v.as_dict() for v in self.videos],
            "problems": [str(p) for p in listing.problems],
        }
        write_json(self.out / "videos.json", listed, indent=1)
        self._say_stale()

    def _say_stale(self) -> None:
        """Name the transcripts and keyframe folders in OUT of videos not listed now (removed
        from the input, or a video sharing its file name with another: their ids come from
        their paths since the ids stopped depending on the listing order): this run neither
        reads nor updates them."""
        ids = {v.video_id for v in self.videos}
        folders = [p for p in self.out.glob("keyframes/*") if p.is_dir() and p.name not in ids]
        files = [p for p in self.out.glob("transcripts/*.json") if p.stem not in ids]
        stale = sorted(str(path.relative_to(self.out)) for path in [*folders, *files])
        if stale:
            shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
            self.console.print(
                f"[yellow]not listed[/]: {escape(shown)} in {escape(str(self.out))} belong to no "
                "video listed now (see videos.json for the ids); this run neither reads nor "
                "updates them: remove them",
                highlight=False,
            )

    # ------------------------------------------------------------------------------ models
    def _model(self, choice: ModelChoice | None, role: str) -> Model:
        if choice is None:
            raise ConfigError(f"curate mmworld: the {role} needs a model spec (--model SPEC)")
        key = (choice.spec, json.dumps(choice.options, sort_keys=True))
        if key not in self._models:
            options = ModelOptions(
                self.config.seed, self.config.concurrency, dict(choice.options), choice.flag
            )
            self._models[key] = load_model(choice.spec, options)
        return self._models[key]

    def _filter_choice(self) -> ModelChoice | None:
        return self.config.filter_model or self.config.generator

    def _text_choice(self) -> ModelChoice | None:
        return self.config.text_model or self._filter_choice()

    def _ask(self, model: Model, calls: list[ModelCall[Value]]) -> dict[str, CallResult[Value]]:
        return ask_in(self.out, model, calls, self.config)

    # ------------------------------------------------------------------------------ stages
    def asr(self) -> dict[str, Transcript]:
        transcriber = Transcriber(self.config.asr, self.config.asr_cache_dir)
        found = transcriber.run(self.videos, self.out / "transcripts", self.config.progress)
        self._stage("asr", asr_stage(found))
        self._problems(
            "asr",
            [
                {"video_id": t.video_id, "asr": t.status, "reason": t.reason}
                for t in found.values()
                if t.status != "ok"
            ],
        )
        return found

    def keyframes(self) -> dict[str, Keyframes]:
        spec = keyframe_spec(self.config.keyframes, self.config.max_side)
        cache = FrameCache(self.config.cache_dir)
        found = select_keyframes(
            self.videos, spec, cache, self.out / "keyframes", self.config.progress
        )
        failed = [k for k in found.values() if not k.ok]
        self._stage("keyframes", keyframes_stage(len(found) - len(failed), len(failed)))
        self._problems(
            "keyframes", [{"video_id": k.video_id, "keyframes": k.error} for k in failed]
        )
        return found

    def questions(
        self,
    ) -> tuple[list[SubsetCandidate], dict[str, Transcript], dict[str, Keyframes]]:
        """asr, keyframes and generation; every candidate in OUT/candidates.jsonl."""
        transcripts, frames = self.asr(), self.keyframes()
        plan = generation.plan_generation(
            self.videos, transcripts, frames, self.config.subsets, self.config.questions
        )
        verdicts = self._ask(self._model(self.config.generator, "generator"), plan.calls)
        found, counts, problems = generation.collect(plan, verdicts, self.config.seed)
        self._stage("generation", generation_stage({s: counts[s] for s in self.config.subsets}))
        self._problems("generation", problems)
        write_jsonl(self.out / "candidates.jsonl", [c.as_dict() for c in found])
        return found, transcripts, frames

    def all(self) -> dict[str, JsonValue]:
        """Every stage; the funnel (also in OUT/funnel.json)."""
        found, transcripts, frames = self.questions()
        decisions = self._filter(found, transcripts, frames)
        subsets = self.config.subsets
        self._stage("filter", filter_stage(filters.filter_counts(found, decisions, subsets)))
        kept = [c for c in found if decisions[c.id].status == "kept"]
        by_id = {v.video_id: v for v in self.videos}
        written = write_subsets(self.out, by_id, kept, transcripts)
        self._stage("output", output_stage({s: written[s] for s in subsets}))
        records = [c.as_dict() | vars(decisions[c.id]) for c in found]
        write_jsonl(self.out / "candidates.jsonl", records)
        write_json(self.out / SETTINGS_FILE, self.settings(), indent=1)
        return self.finish()

    def settings(self) -> dict[str, Json]:
        """What built OUT/mmworld.json (OUT/settings.json, for the dataset card of an export):
        the models, the prompt versions and every setting that decides the questions."""

        def model(choice: ModelChoice | None) -> dict[str, Json] | None:
            return None if choice is None else {"spec": choice.spec, "options": choice.options}

        config = self.config
        prompts = [*generation.PROMPT_FILES.values(), filters.PROMPT_FILE]
        return {
            "videos": str(config.videos),
            "generator": model(config.generator),
            "filter_model": model(self._filter_choice()),
            "text_model": model(self._text_choice()),
            "discipline": config.discipline,
            "subsets": list(config.subsets),
            "questions_per_video_and_subset": config.questions,
            "keyframes": config.keyframes,
            "max_side": config.max_side,
            "asr": {"model": config.asr.model or "tiny.en (shipped)", **config.asr.key_fields()},
            "attempts": config.attempts,
            "seed": config.seed,
            "prompts": [generation.prompt(name).version for name in prompts],
        }

    def _filter(
        self,
        found: list[SubsetCandidate],
        transcripts: dict[str, Transcript],
        frames: dict[str, Keyframes],
    ) -> dict[str, filters.Decision]:
        vision = self._model(self._filter_choice(), "filter model")
        text = self._model(self._text_choice(), "text model")
        blind = self._ask(vision, [filters.check_call(c, "blind") for c in found])
        decisions: dict[str, filters.Decision] = {}
        survivors = []
        for c in found:
            settled = filters.decide_blind(c, blind[f"{c.id}:blind"])
            if settled is None:
                survivors.append(c)
            else:
                settled.answers = {"blind": blind[f"{c.id}:blind"].value}
                decisions[c.id] = settled
        plan = filters.plan_modality_checks(survivors, transcripts, frames)
        verdicts = self._ask(text, plan.text_calls) | self._ask(vision, plan.vision_calls)
        for c in survivors:
            if c.id in plan.decided:
                decisions[c.id] = plan.decided[c.id]
                continue
            own = verdicts[f"{c.id}:{filters.OWN[c.subset]}"]
            other = verdicts.get(f"{c.id}:{filters.OTHER[c.subset]}")
            answers = {"blind": blind[f"{c.id}:blind"].value, filters.OWN[c.subset]: own.value}
            if other is not None:
                answers[filters.OTHER[c.subset]] = other.value
            decisions[c.id] = filters.decide(c, own, other, answers)
        return decisions

    def _stage(self, name: str, count: StageCount) -> None:
        self.funnel.stages[name] = count
        self.funnel.stages = {s: self.funnel.stages[s] for s in STAGES if s in self.funnel.stages}

    def _problems(self, stage: str, records: list[dict[str, JsonValue]]) -> None:
        self.funnel.problems += [{"stage": stage, **record} for record in records]

    def _write_funnel(self) -> None:
        """OUT/funnel.json: this run's stages and problems, and those of the stages it did not
        run that an earlier command wrote there (`queries`; `asr` when `keyframes` runs alone).
        A funnel.json holding a stage after this run's last (`asr` run alone after `all`) is left
        as it is: its later counts were made from this stage's earlier output, and writing this
        run's alone would drop them without a word."""
        try:
            earlier = Funnel.read(self.out)
        except ConfigError:  # not a funnel: ours to write
            earlier = Funnel()
        last = max(STAGES.index(name) for name in self.funnel.stages)
        later = [n for n in earlier.stages if n in STAGES and STAGES.index(n) > last]
        if later:
            self.console.print(
                f"[yellow]kept[/] {escape(str(self.out))}/funnel.json: it holds later stages "
                f"({', '.join(later)}) of an earlier run; `curate mmworld all` writes it anew",
                highlight=False,
            )
            return
        kept = {n: c for n, c in earlier.stages.items() if n not in self.funnel.stages}
        for name, count in kept.items():
            self._stage(name, count)
        self.funnel.problems += [p for p in earlier.problems if p.get("stage") in kept]
        self.funnel.write(self.out)

    def finish(self) -> dict[str, JsonValue]:
        """Write and print the funnel; say what is incomplete."""
        if (self.out / Store.FILENAME).is_file():  # else no model was asked
            with Store(self.out) as store:
                self.funnel.usage = usage_by_stage(store)
        self._write_funnel()
        data = self.funnel.document()
        self.console.print(funnel_table(self.funnel))
        stages = self.funnel.stages
        undecided = stages["filter"].pending if "filter" in stages else 0
        generation = stages.get("generation")
        failed = generation.uncounted.get("call errors", 0) if generation else 0
        if undecided or failed:
            self.console.print(
                f"[red]incomplete[/]: {failed} generation call(s) and {undecided} question "
                "check(s) failed; run the same command again to retry them"
            )
        data["incomplete"] = bool(undecided or failed)
        return data
