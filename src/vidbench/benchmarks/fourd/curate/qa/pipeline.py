"""`curate 4d qa`: generation -> validation -> blind filter -> output (4D-Bench paper, section
3.3, without the human review, which the annotate app does on OUT/review_queue.jsonl).

1. generate: per object and subtask the generator sees the FrameSpec's frames and the subtask's
   chain-of-thought prompt and writes up to N questions; each is parsed and checked strictly.
2. validate: the validator model checks each candidate against the subtask's guidelines and
   gives a verdict with a reason; rejects are kept in candidates.jsonl with their reason.
3. blind: the question and options alone go to two text-only models; a question both answer
   correctly is dropped. Their answers are recorded.
4. output (output.py): 4d_qa.json, review_queue.jsonl, candidates.jsonl, funnel.json/.md.

Every call goes through runner/model_calls.ask_model into OUT/store.sqlite: a rerun asks nothing it
has, a run stopped by Ctrl-C or kill -9 continues where it stopped, and a failed call leaves its
question `undecided` until the next run asks again. OUT is held by one command at a time.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.markup import escape

from vidbench.benchmarks.fourd.curate.funnel import refuse_other
from vidbench.benchmarks.fourd.curate.qa import calls, output
from vidbench.benchmarks.fourd.curate.qa.candidates import (
    SUBTASKS,
    BlindAnswer,
    Candidate,
    make_candidates,
)
from vidbench.benchmarks.fourd.curate.qa.config import QAConfig
from vidbench.benchmarks.fourd.curate.qa.funnel import FunnelData, QAFunnel
from vidbench.benchmarks.fourd.curate.qa.objects import (
    QAObject,
    Skipped,
    list_objects,
    video_root,
)
from vidbench.benchmarks.fourd.curate.qa.shortfall import shortfall
from vidbench.console import err
from vidbench.core.errors import ConfigError, MediaError
from vidbench.core.messages import Part
from vidbench.media.cache import FrameCache
from vidbench.models.registry import ModelChoice, ModelOptions, load_model
from vidbench.runner.lock import results_lock
from vidbench.runner.model_calls import ask_in
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult, ModelCall

Value = TypeVar("Value")  # what a stage's calls parse to


class QACuration:
    def __init__(self, config: QAConfig, console: Console | None = None) -> None:
        if len(config.blind) != 2:
            raise ConfigError("curate 4d qa: give exactly two --blind models")
        unknown = set(config.subtasks) - set(SUBTASKS)
        if unknown:
            raise ConfigError(f"unknown subtasks {sorted(unknown)}: choose from {list(SUBTASKS)}")
        self.config = config
        self.console = console or err
        self.out = Path(config.out)
        refuse_other(self.out, "curate 4d qa")
        self.funnel = QAFunnel()

    def _ask(
        self, stage: str, choice: ModelChoice, batch: Sequence[ModelCall[Value]]
    ) -> dict[str, CallResult[Value]]:
        c = self.config
        model = load_model(
            choice.spec, ModelOptions(c.seed, c.concurrency, dict(choice.options), choice.flag)
        )
        verdicts = ask_in(self.out, model, batch, c, stage)
        self.funnel.asked_now[stage] += sum(v.asked for v in verdicts.values())
        return verdicts

    # ----------------------------------------------------------------------------- stages
    def objects(self) -> tuple[list[QAObject], dict[str, tuple[Part, ...]], Path]:
        """The usable objects, their frames, and the folder of their videos."""
        listing = list_objects(self.config.data, self.config.spec)
        found = listing.objects[: self.config.objects] if self.config.objects else listing.objects
        skipped = list(listing.skipped)
        cache = FrameCache(self.config.cache_dir)
        images: dict[str, tuple[Part, ...]] = {}
        for obj in found:
            try:
                images[obj.uid] = calls.object_images(obj, self.config.spec, cache)
            except MediaError as e:
                skipped.append(Skipped(obj.uid, "unreadable video", str(e)))
        usable = [o for o in found if o.uid in images]
        for s in skipped:
            self.console.print(
                f"[yellow]skipped[/] {escape(s.uid)}: {escape(s.reason)} {escape(s.detail)}"
            )
        self.funnel.objects = {
            "layout": listing.layout,
            "found": len(found) + len(listing.skipped),
            "used": len(usable),
            "skipped": dict(Counter(s.reason for s in skipped)),
        }
        self.funnel.problems += [{"stage": "objects", **s.as_dict()} for s in skipped]
        return usable, images, listing.video_root

    def generate(
        self, objects: list[QAObject], images: dict[str, tuple[Part, ...]]
    ) -> list[Candidate]:
        spec, count = self.config.spec, self.config.questions
        batch = [
            calls.generate_call(o, s, images[o.uid], spec, count)
            for o in objects
            for s in self.config.subtasks
        ]
        verdicts = self._ask("generate", self.config.generator, batch)
        found: list[Candidate] = []
        for obj in objects:
            for subtask in self.config.subtasks:
                counts = self.funnel.subtasks[subtask]
                counts["objects"] += 1
                item = f"generate/{obj.uid}/{SUBTASKS[subtask]}"
                verdict = verdicts[item]
                where = {"stage": "generate", "uid": obj.uid, "subtask": subtask}
                if verdict.absent:
                    counts["call errors"] += 1
                    self.funnel.problems.append({**where, "error": verdict.error or "missing"})
                    continue
                generated = verdict.value
                if generated is None:
                    counts["replies unparsed"] += 1
                    reply = (verdict.reply or "")[-300:]
                    self.funnel.problems.append({**where, "unparsed reply": reply})
                    continue
                counts["generated"] += len(generated.questions) + len(generated.rejected)
                for bad in generated.rejected:
                    counts["parse rejects"][bad["reason"]] += 1
                    self.funnel.problems.append(
                        {**where, "reason": bad["reason"], "detail": bad["detail"]}
                    )
                made = make_candidates(obj.uid, subtask, generated, self.config.seed)
                counts["candidates"] += len(made)
                found.extend(made)
        return found

    def validate(self, found: list[Candidate], images: dict[str, tuple[Part, ...]]) -> None:
        batch = [calls.validate_call(c, images[c.uid], self.config.spec) for c in found]
        verdicts = self._ask("validate", self.config.validator, batch)
        for c in found:
            verdict = verdicts[f"validate/{c.id}"]
            counts = self.funnel.subtasks[c.subtask]
            if verdict.absent:
                c.status, c.reason = "undecided", f"validator call failed: {verdict.error}"
                counts["undecided"] += 1
                continue
            if verdict.value is None:
                c.status, c.reason = "rejected", "validator reply unparsed"
                c.validation = {"reply": (verdict.reply or "")[-500:]}
            else:
                c.validation = verdict.value
                if verdict.value.get("accept"):
                    counts["validator accepted"] += 1
                    continue
                c.status, c.reason = "rejected", verdict.value.get("reason") or "no reason given"
            counts["validator rejects"][c.reason] += 1

    def blind(self, found: list[Candidate]) -> None:
        accepted = [c for c in found if c.status == "candidate"]
        batch = [calls.blind_call(c) for c in accepted]
        answers = [self._ask("blind", choice, batch) for choice in self.config.blind]
        for c in accepted:
            counts = self.funnel.subtasks[c.subtask]
            verdicts = [a[f"blind/{c.id}"] for a in answers]
            for n, (choice, verdict) in enumerate(zip(self.config.blind, verdicts, strict=True)):
                letter = verdict.value or None
                answer: BlindAnswer = {
                    "model": choice.spec,
                    "letter": letter,
                    "text": c.options.get(letter) if letter else None,
                    "correct": letter == c.answer,
                }
                if verdict.absent:
                    answer["error"] = verdict.error
                c.blind[f"blind {n + 1}"] = answer
            if any(v.absent for v in verdicts):
                c.status, c.reason = "undecided", "blind call failed"
                counts["undecided"] += 1
            elif all(b["correct"] for b in c.blind.values()):
                c.status, c.reason = "blind-dropped", "both blind models answered correctly"
                counts["blind-dropped"] += 1
            else:
                c.status = "kept"
                counts["kept"] += 1

    def run(self) -> FunnelData:
        """Every stage and the output; the funnel's data with `incomplete` (failed calls)."""
        if video_root(self.config.data)[0].resolve() == self.out.resolve():
            raise ConfigError(
                f"--out {self.out} holds the object folders: give another folder (OUT gets a "
                "link to the videos, 4d_qa.json and the funnel)"
            )
        with results_lock(self.out, "curate 4d qa"):
            objects, images, videos = self.objects()
            found = self.generate(objects, images)
            self.validate(found, images)
            self.blind(found)
            written = output.write_all(self.out, found, videos, self.config)
            self.funnel.letters = written.letters
            with Store(self.out) as store:
                data = self.funnel.write(self.out, store)
        incomplete = sum(c["undecided"] + c["call errors"] for c in self.funnel.subtasks.values())
        data["incomplete"] = incomplete
        self.console.print(
            f"{written.kept} questions kept of {data['total']['generated']} generated; "
            f"calls this run: {json.dumps(data['calls this run'])}; see {self.out / 'funnel.md'}",
            highlight=False,
        )
        asked = len(objects) * len(self.config.subtasks) * self.config.questions
        for line in shortfall(data, asked, self.out):
            self.console.print(escape(line), highlight=False)
        if incomplete:
            self.console.print(
                f"[red]incomplete[/]: {incomplete} call(s) failed; run the same "
                "command again to retry them"
            )
        return data
