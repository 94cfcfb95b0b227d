"""One evaluation run: the `infer`, `judge`, `score` and `report` stages over a results
directory (its files: report/results_dir.py; its answers and verdicts: runner/store.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape

from vidbench.console import err
from vidbench.core.errors import ConfigError, code_of
from vidbench.core.files import Json
from vidbench.media.cache import FrameCache
from vidbench.models.base import Model, ModelRef, check_reachable
from vidbench.models.pricing import cost_of
from vidbench.models.registry import ModelOptions, load_model
from vidbench.report.results import (
    RowTally,
    build_results,
    truncation_warning,
    usage_warning,
)
from vidbench.report.results_dir import RESULTS_FILE, SAMPLES_FILE, TIMING_FILE, ResultsDir
from vidbench.report.schema import SCORE_STATUS, Results, SampleRow
from vidbench.report.tables import print_table
from vidbench.runner import data_identity
from vidbench.runner.infer import infer
from vidbench.runner.keys import plan_key
from vidbench.runner.lock import results_lock
from vidbench.runner.model_calls import CallTally, ask_model, ask_streamed, describe_verdicts
from vidbench.runner.prepare import check_views
from vidbench.runner.recorder import InferStats
from vidbench.runner.run_config import RunConfig
from vidbench.runner.samples import RunSamples
from vidbench.runner.score import StoredVerdicts, judge_calls_of, scored_rows
from vidbench.runner.spool import take_spooled
from vidbench.runner.store import FailedCall, Store
from vidbench.scoring.judge import NO_VERDICT, no_verdict_message
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.tasks.base import Task
from vidbench.tasks.data import data_folder
from vidbench.tasks.problems import Problem

STAGES = ("infer", "judge", "score", "report")
# A call the API rejected (a bad request, a refused key, an unknown model, a spent quota, a
# request too large) needs a change first, as do bad rows, missing videos and refusals; running
# the same command again may clear a failed model call (status error: a timeout, a server error)
# or judge call (status judge, unless the judge's call was rejected).
REJECTED = "rejected"
# What samples.jsonl was scored from (scored.json), each with how a report stage says it changed.
SCORED_FROM = {
    "plan": "for another model, or other model or task settings",
    "task": "under another task variant",
    "judge": "with another judge",
    "limit": "with another --limit",
    "answers": "before the store got more answers",
    "verdicts": "before the store got more verdicts",
}


@dataclass
class RunOutcome:
    """What the stages of one run left undone: empty when the results are complete (every
    sample answered, judged where the task needs it, and scored)."""

    incomplete: list[str] = field(default_factory=list)  # one line per kind of gap
    retry_helps: bool = False  # some gap is a failed call (a timeout, a server error)
    not_asked: bool = False  # some sample has no answer yet: a stopped run, scored alone
    scorer_failed: bool = False  # the task's scorer failed on some answer (status `score`)
    retried: int = 0  # failed model calls a rerun retries (status error)
    judge_retried: int = 0  # answers without a verdict a rerun may give one (status judge)
    # failed model calls a rerun does not fix, by what must change first (status rejected)
    change_first: Counter[str] = field(default_factory=Counter)

    @property
    def complete(self) -> bool:
        return not self.incomplete

    @classmethod
    def merged(cls, outcomes: Sequence[RunOutcome]) -> RunOutcome:
        """What several runs (--runs N, a sweep's grid) left undone, together."""
        return cls(
            incomplete=[line for outcome in outcomes for line in outcome.incomplete],
            retry_helps=any(outcome.retry_helps for outcome in outcomes),
            not_asked=any(outcome.not_asked for outcome in outcomes),
            scorer_failed=any(outcome.scorer_failed for outcome in outcomes),
            retried=sum(outcome.retried for outcome in outcomes),
            judge_retried=sum(outcome.judge_retried for outcome in outcomes),
            change_first=sum((outcome.change_first for outcome in outcomes), Counter()),
        )

    def count_unscored(self, unscored: Sequence[tuple[str, str | None]]) -> None:
        """What the samples left unscored, (status, what must change first) each, say: some
        never asked, some the scorer failed on, the failed calls (`count_calls`)."""
        statuses = {status for status, _ in unscored}
        self.not_asked = "missing" in statuses
        self.scorer_failed = SCORE_STATUS in statuses
        self.count_calls(unscored)

    def count_judged(self, verdicts: CallTally) -> None:
        """Add a judge stage's calls left without a verdict: those the API refused and would
        refuse again, by what must change first; the others a new judge stage asks again."""
        self.change_first += verdicts.change_first
        self.judge_retried += verdicts.absent - verdicts.change_first.total()
        self.retry_helps = bool(self.retried or self.judge_retried)

    def count_calls(self, failures: Iterable[tuple[str, str | None]]) -> None:
        """Count the failed model calls among these samples' (status, what must change first):
        those a rerun retries, and those that need a change first, by what (models/retry.py
        decided, and the store keeps; a judge call's, as its sample's row has it); then
        whether a rerun helps at all."""
        self.retried, self.judge_retried, self.change_first = 0, 0, Counter()
        for status, change in failures:
            if status == REJECTED or change is not None:
                self.change_first[change or "the request"] += 1
            elif status == "error":
                self.retried += 1
            elif status == NO_VERDICT:
                self.judge_retried += 1
        self.retry_helps = bool(self.retried or self.judge_retried)


class Run:
    """A configured run: its task, model, store and plan key.

    Only what a stage needs is opened: the model (and its key) when it must answer, the dataset
    when samples are needed; the report stage reads stored files alone.
    """

    def __init__(
        self,
        config: RunConfig,
        task: Task | None = None,
        console: Console | None = None,
        input_problems: Sequence[Problem] = (),
    ) -> None:
        """`task`: a Task of your own; default the one the configuration names
        (`RunConfig.open_task`)."""
        self.config = config
        self.console = console or err
        self.task = config.open_task() if task is None else task
        # problems with inputs beside the data (e.g. answers for unknown ids in a predictions
        # file): recorded with the loader's, so results never look complete without them
        self.input_problems = list(input_problems)
        if config.judge and not self.task.uses_judge:
            raise ConfigError(
                f"{config.task} is not scored by an LLM judge: --judge {config.judge} would not "
                "be used; leave it out"
            )
        self._samples: RunSamples | None = None
        self._scored: RowTally | None = None  # what this run's score stage wrote

    @cached_property
    def model(self) -> Model:
        options = ModelOptions(self.config.seed, self.config.concurrency, self.config.model_options)
        return load_model(self.config.model, options)

    @cached_property
    def judge(self) -> Model | None:
        if not self.config.judge:
            return None
        options = ModelOptions(
            self.config.seed,
            self.config.concurrency,
            dict(self.config.judge_options),
            "--judge-opt",
        )
        return load_model(self.config.judge, options)

    @property
    def model_identity(self) -> Mapping[str, Json]:
        return self.config.model_identity or self.model.identity()

    def _judge_ref(self) -> Model | None:
        """The judge as far as stored verdicts go: its identity keys them."""
        if self.config.judge and self.config.judge_identity:
            return ModelRef(self.config.judge_identity)
        return self.judge

    @property
    def plan(self) -> str:
        return plan_key(self.task.settings(), self.model_identity)

    def _skipped(self, problem: Problem) -> None:
        self.console.print(f"[yellow]skipped[/] {escape(str(problem))}")

    @property
    def samples(self) -> RunSamples:
        """The run's samples, read a batch at a time (runner/samples.py)."""
        if self._samples is None:
            self._samples = RunSamples(
                self.task, self.config.data, self.config.limit, on_problem=self._skipped
            )
            for problem in self.input_problems:
                self._skipped(problem)
        return self._samples

    @property
    def problems(self) -> list[Problem]:
        return [*self.samples.problems, *self.input_problems]

    def _check_views(self) -> None:
        """A view no sample has: said once, before any model call (and before the run writes)."""
        if self.model.needs_frames:
            check_views(self.task, self.samples, str(data_folder(self.task, self.config.data)))

    def infer(self) -> InferStats:
        self.config.model_identity = self.model.identity()
        if self.judge is not None:  # so a later score stage needs no judge key
            self.config.judge_identity = self.judge.identity()
        self._save_config()
        started = time.perf_counter()
        with Store(self.config.results_dir) as store:
            take_spooled(store)  # what a killed Ray driver's workers got and it never stored
            run_id = store.start_run(self.plan, asdict(self.config))
            if self.config.ray is not None:  # sharded over Ray workers; this process writes
                from vidbench.runner.ray.run import RayInfer, infer_run_on_ray

                what = RayInfer(
                    self.config, self.task, self.model, self.model_identity, self.plan, self.samples
                )
                stats = infer_run_on_ray(what, store, run_id)
            else:
                cache = FrameCache(Path(self.config.cache_dir) if self.config.cache_dir else None)
                stats = asyncio.run(self._infer(store, run_id, cache))
        self.console.print(
            f"infer: {stats.answered} answered, {stats.reused} reused from the store, "
            f"{stats.failed} failed"
        )
        self._record_timing(time.perf_counter() - started, stats.timing)
        return stats

    def _save_config(self) -> None:
        """run.json, for the stages that follow; the score and report stages' files of another
        configuration go (another model, variant, judge or --limit): they are no results of
        the run run.json now names, and `audit`, `predictions`, `view` would read them as such
        (its answers stay in the store: that configuration's command reports them again)."""
        self.config.save()
        directory = ResultsDir(self.config.results_dir)
        if not directory.file(SAMPLES_FILE).is_file():
            return
        stamp, now = directory.stored_basis(), self._scoring_basis(None)
        if stamp is not None and all(stamp.get(key) == value for key, value in now.items()):
            return
        removed = directory.forget_scored()
        self.console.print(
            f"{escape(str(self.config.results_dir))} held the results of another configuration: "
            f"removed {', '.join(removed)} (its answers stay in the store)",
            highlight=False,
        )

    def _record_timing(self, wall_s: float, timing: dict[str, float | int] | None) -> None:
        """A local model's device share of this infer stage (all Ray workers'), for results.json."""
        timing = timing or self.model.timing()
        if timing is None or not timing["batches"]:  # nothing generated: keep the last record
            return
        devices = timing.get("devices", 1)
        busy = timing["device_s"] / (wall_s * devices) if wall_s > 0 else 0.0
        record = {
            **timing,
            "wall_s": round(wall_s, 3),
            "device_busy": round(busy, 3),
            "plan": self.plan,  # whose it is: another model's is not reported as this one's
        }
        ResultsDir(self.config.results_dir).write_json(TIMING_FILE, record)
        self.console.print(
            f"device busy {100 * busy:.0f}% (device {timing['device_s']:.1f} s, preparing "
            f"{timing['prepare_s']:.1f} s in parallel, wall {wall_s:.1f} s)"
        )

    async def _infer(self, store: Store, run_id: int, cache: FrameCache) -> InferStats:
        try:
            return await infer(
                self.task,
                self.model,
                self.samples,
                store,
                self.plan,
                run_id,
                cache,
                self.config.concurrency,
                self.config.progress,
            )
        finally:
            await self.model.aclose()

    def _judge_calls(self, store: Store) -> Iterator[ModelCall[object]]:
        """The judge calls of every stored answer, built as they are asked for (a batch's
        answers read at a time)."""
        for batch in self.samples.batches():
            responses = store.responses(self.plan, [sample.id for sample in batch])
            for sample in batch:
                if sample.id in responses:
                    calls = judge_calls_of(self.task, sample, responses[sample.id].text)
                    if isinstance(calls, list):  # else: its row says why (the score stage)
                        yield from calls

    def _check_judge_given(self) -> None:
        if self.task.uses_judge and not self.task.judge_optional and self.judge is None:
            raise ConfigError(f"{self.task.name} needs an LLM judge: give --judge SPEC")

    def _stored_verdicts(self, store: Store) -> StoredVerdicts | None:
        """What the score stage reads the judge's verdicts with (nothing is asked); None when
        this run has no judge."""
        judge = self._judge_ref()
        if judge is None:
            return None

        def stored(calls: Sequence[ModelCall[object]]) -> Mapping[str, CallResult[object]]:
            return ask_model(
                judge,
                calls,
                store,
                allow_calls=False,
                max_attempts=self.task.judge_attempts or self.config.judge_attempts,
            )

        return stored

    def judge_stage(self) -> CallTally:
        """Ask the judge about every stored answer that needs one (stored verdicts are reused;
        the calls are built as they are asked, never all held at once)."""
        if self.judge is not None:
            self.config.judge_identity = self.judge.identity()
        self._save_config()  # later `score`/`report` stages read the judge from run.json
        if self.judge is None:
            self._check_judge_given()
            return CallTally()
        with Store(self.config.results_dir) as store:
            tally = ask_streamed(
                self.judge,
                lambda: self._judge_calls(store),
                store,
                max_attempts=self.task.judge_attempts or self.config.judge_attempts,
                concurrency=self.config.concurrency,
                show_progress=self.config.progress,
            )
        if tally.total:
            self.console.print(describe_verdicts(tally))
        return tally

    def _check_judge_reachable(self) -> None:
        """An unreachable judge or a rejected key stops the run before inference."""
        if self.judge is not None:
            check_reachable(self.judge)

    def score(self) -> list[SampleRow]:
        """Write samples.jsonl (a batch of rows at a time) and usage.json, tallying the rows for
        this run's report stage as they are written; the rows not scored."""
        self.config.save()  # the task variant scored is the one a later report stage shows
        tally = RowTally(self.task)
        with Store(self.config.results_dir) as store:
            verdicts = self._stored_verdicts(store)
            usage: dict[str, int | dict[str, int]] = {**store.usage(self.plan)}
            if self.config.judge:
                usage["judge"] = store.call_usage(self.config.judge)
            data = data_identity.ContentDigest()  # of the samples as they are scored
            samples = data.each(self.samples)
            rows = scored_rows(self.task, samples, self.problems, store, self.plan, verdicts)
            basis = self._scoring_basis(store)
            ResultsDir(self.config.results_dir).write_scored(
                tally.passing(rows),
                usage,
                lambda: {**basis, data_identity.SCORED_DATA: data.hexdigest()},
            )
        self._scored = tally
        return tally.failed

    def _scoring_basis(self, store: Store | None) -> dict[str, Json]:
        """What the score stage's rows depend on beside the data: the plan (model and task
        settings), the task variant, the judge, --limit, and how many answers and verdicts the
        store held (`store`: None when there is none to read)."""
        judge = self._judge_identity()
        basis: dict[str, Json] = {
            "plan": self.plan,
            "task": self.task.name,
            "judge": None if judge is None else dict(judge),
            "limit": self.config.limit,
        }
        if store is not None:
            basis["answers"] = store.usage(self.plan)["requests"]
            if self.config.judge:
                basis["verdicts"] = store.call_usage(self.config.judge)["requests"]
        read_back: dict[str, Json] = json.loads(json.dumps(basis))  # as scored.json gives it
        return read_back

    def _check_scored(self, directory: ResultsDir) -> None:
        """ConfigError when samples.jsonl is not what the score stage would write now: scored
        for another model, variant, judge or --limit, before answers or verdicts were added,
        edited since (report/results_dir.ResultsDir.scored_basis), or from other data (a row's
        field edited since: runner/data_identity.data_changed)."""
        stamp = directory.scored_basis()
        if directory.file(Store.FILENAME).is_file():
            with Store.read_only(directory.path) as store:
                now = self._scoring_basis(store)
        else:  # a copy of the results files alone: the counts cannot be checked
            now = self._scoring_basis(None)
        differ = [
            why for key, why in SCORED_FROM.items() if key in now and stamp.get(key) != now[key]
        ]
        if differ:
            raise ConfigError(
                f"{directory.file(SAMPLES_FILE)} was scored {' and '.join(differ)}: run the "
                f"score stage first (vidbench run --out {directory.path} --stage score), then "
                "the report stage"
            )
        changed = data_identity.data_changed_now(self.config, self.task, stamp)
        if changed is not None:
            raise ConfigError(f"{directory.file(SAMPLES_FILE)}: {changed}")

    def report(self, print_to: Console | None = None) -> Results:
        directory = ResultsDir(self.config.results_dir)
        if self._scored is None:  # samples.jsonl of an earlier score stage: is it this run's?
            self._check_scored(directory)
        usage = directory.read_usage()
        results = build_results(
            self.task,
            self.model_identity,
            # the rows this run's score stage wrote, tallied as it wrote them; else the file's
            self._scored if self._scored is not None else directory.iter_samples(),
            extra={
                # a task's own: its folder; resolved, so runs given the same data from other
                # folders (or other data by one relative name) are grouped by what it is
                "data": str(data_folder(self.task, self.config.data).resolve()),
                "seed": self.config.seed,
                "plan": self.plan,
                "judge": self._judge_identity(),
                "usage": usage,
                "cost": cost_of(self.config.model, usage),  # None without a price table
                **self._timing(directory),
            },
            seed=self.config.seed,
        )
        directory.write_results(results)
        if print_to is not None:
            title, data = self.task.title or self.task.name, self.config.data
            print_table([results], f"{title} — {data}" if data else title, print_to)
        for warning in [
            *(results.warnings or []),
            *truncation_warning(results),
            *usage_warning(results),
        ]:
            self.console.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False)
        if results.errors:
            self.console.print(
                f"[red]{results.errors} error(s)[/] ("
                + ", ".join(f"{n} {kind}" for kind, n in results.errors_by_status.items())
                + f"): see error_details in {directory.file(RESULTS_FILE)}"
            )
            first = results.error_details[0].error
            self.console.print(f"the first: {escape(first[:300])}", highlight=False)
        if results.unjudged:  # not those the judge's API would refuse again: the advice's
            self.console.print(f"[red]{no_verdict_message(results.unjudged)}[/]")
        return results

    def _timing(self, directory: ResultsDir) -> dict[str, JsonValue]:
        """`{"timing": timing.json}` when the last timed infer stage was this plan's, else
        nothing (a local model's timing outlives a rerun by an API model in the folder)."""
        found = directory.read_optional(TIMING_FILE, "timing")
        timing = found.get("timing")
        return found if isinstance(timing, dict) and timing.get("plan") == self.plan else {}

    def _judge_identity(self) -> Mapping[str, Json] | None:
        judge = self._judge_ref()
        return None if judge is None else judge.identity()

    def run(self, stages: tuple[str, ...] = STAGES, print_to: Console | None = None) -> RunOutcome:
        """The stages, in order, holding the results directory for the whole time; what they
        left undone."""
        self._check_out_is_not_data()
        with results_lock(self.config.results_dir, f"vidbench run {self.config.task}"):
            try:
                return self._run(stages, print_to)
            finally:
                if self._samples is not None:  # its spool file
                    self._samples.close()
                    self._samples = None

    def _check_out_is_not_data(self) -> None:
        """The results folder must not be the data folder: the run's files (samples.jsonl,
        results.json, ...) would overwrite the data's files of those names, and --fresh would
        delete them. (A folder inside it is fine: `--data . --out results`.)"""
        data = data_folder(self.task, self.config.data).resolve()
        if self.config.results_dir.resolve() == data:
            raise ConfigError(
                f"--out {self.config.results_dir} is the data folder {data}: the results files "
                "would be written among the data's (a file of the data named like one, e.g. "
                "samples.jsonl, would be replaced); give --out another folder"
            )

    def _start_over(self) -> None:
        """`--fresh`: delete the folder's run (data_identity.start_over), once this run loads
        rows (a typo in --data deleted every stored answer, then stopped for want of rows)."""
        folder = data_folder(self.task, self.config.data)
        data_identity.check_loads(self.samples, folder, self.config.results_dir, self.problems)
        for path in data_identity.start_over(self.config.results_dir):
            self.console.print(f"--fresh: deleted {escape(str(path))}", highlight=False)

    def _check_data(self) -> None:
        """The rows this run reads must be the data the results folder holds, and there must be
        some (runner/data_identity.py): otherwise it stops here, before writing anything."""
        folder = data_folder(self.task, self.config.data)
        loader = f"task {self.task.name} ({code_of(self.task)})"
        data_identity.check_and_record(
            self.samples, folder, self.config.results_dir, self.problems, loader
        )

    def _run(self, stages: tuple[str, ...], print_to: Console | None) -> RunOutcome:
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ConfigError(f"unknown stages {sorted(unknown)}; choose from {', '.join(STAGES)}")
        if "judge" in stages:
            self._check_judge_given()  # before inference, not after it
            self._check_judge_reachable()
        if "infer" in stages:
            self._check_views()
        if self.config.fresh:  # once the run is known to load rows and start: not before
            self._start_over()
        if {"infer", "judge", "score"} & set(stages):
            self._check_data()
        if "score" in stages:
            self.task.preflight()  # the models scoring needs, before any model call
        outcome = RunOutcome()
        if "infer" in stages:
            stats = self.infer()
            if stats.failed:
                outcome.incomplete.append(f"{stats.failed} sample(s) without an answer")
                outcome.count_calls((f.status, f.change_first) for f in self._failures())
        if "judge" in stages:
            verdicts = self.judge_stage()
            if verdicts.absent:
                outcome.incomplete.append(no_verdict_message(verdicts.absent))
                outcome.count_judged(verdicts)
            unanswered = 0 if "infer" in stages else self._unanswered()
            if unanswered:  # a judge stage alone judges what is answered: say what is not
                outcome.incomplete.append(f"{unanswered} sample(s) without an answer to judge")
                outcome.not_asked = True
        if "score" in stages and "report" not in stages:
            unscored = self.score()
            if unscored:  # the same advice as a report stage's, from the rows it would read
                outcome.incomplete.append(f"{len(unscored)} sample(s) not scored")
                outcome.count_unscored([(row.status, row.change_first) for row in unscored])
        elif "score" in stages:
            self.score()
        if "report" in stages:
            results = self.report(print_to)
            if results.errors:
                outcome.incomplete.append(f"{results.errors} of {results.n} not scored")
                outcome.count_unscored([(e.status, e.change_first) for e in results.error_details])
        return outcome

    def _unanswered(self) -> int:
        """How many of this run's samples have no stored answer."""
        with Store(self.config.results_dir) as store:
            return sum(
                len(batch) - len(store.responses(self.plan, [sample.id for sample in batch]))
                for batch in self.samples.batches()
            )

    def _failures(self) -> list[FailedCall]:
        """The last failure of each of this run's samples still without an answer."""
        found: list[FailedCall] = []
        with Store(self.config.results_dir) as store:
            for batch in self.samples.batches():
                ids = [sample.id for sample in batch]
                answered = store.responses(self.plan, ids).keys()
                failures = store.last_failures(self.plan, ids)
                found += [failure for i, failure in failures.items() if i not in answered]
                stale = store.failed_since_answered(self.plan, [i for i in ids if i in answered])
                found += stale.values()  # answers to old prompts
        return found
