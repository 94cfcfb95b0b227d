"""The mistakes a plugin's author makes, each named with the plugin's code, the task and the
sample, while the rest of the run goes on: a results folder never looks complete when it is
not (RunOutcome.complete, exit code 3) and every answer a run got is kept. The task and the
model backends here are a plugin's own (models through the `python:` spec), run in process."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from plugin_support import fake_plugin, refused, run_vidbench

from vidbench import (
    CallResult,
    ConfigError,
    Frame,
    FrameSpec,
    GenerationConfig,
    Json,
    Loaded,
    MediaRef,
    Message,
    Model,
    ModelCall,
    Problem,
    Request,
    Response,
    ResultsTally,
    Run,
    RunConfig,
    Sample,
    SampleScore,
    Table,
    Task,
    TaskEntry,
    TaskRequest,
    TextPart,
    extract_choice,
    load_model,
    outcome,
)
from vidbench.models import registry as model_registry
from vidbench.models.base import check_reachable
from vidbench.runner.model_calls import ask_model
from vidbench.runner.run import RunOutcome
from vidbench.runner.store import Store
from vidbench.tasks.registry import build_task

GOLD = "ABCA"  # q0..q3
MODELS = "python:test_plugin_mistakes"


class Letters(Task):
    """Four questions whose options name their letters; no frame is decoded (the models here
    read text only)."""

    name = "letters"
    version = "1"
    protocol = "test"
    table = Table(("Accuracy",))
    frame_spec = FrameSpec(views=(0,), frames=1)
    generation = GenerationConfig()

    def load(self, data: Path) -> Loaded[Sample]:
        return Loaded([self.sample(i, data) for i in range(len(GOLD))], [])

    @staticmethod
    def sample(i: int, data: Path) -> Sample:
        question = "Which letter? (A) a (B) b (C) c"
        return Sample(f"q{i}", "letters", "mcq", MediaRef.single(data / f"{i}.mp4"), question,
                      ("a", "b", "c"), GOLD[i])  # fmt: skip

    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        return (Message("user", (TextPart(f"{sample.id}: {sample.question}"),)),)

    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        parsed = extract_choice(reply)
        correct = parsed == sample.answer
        return SampleScore(outcome=outcome.graded(correct), parsed=parsed, gold=sample.answer)

    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        return {"Accuracy": [float(s.correct) for s in scores if s.correct is not None]}


class Gold(Model):
    """Answers each question right (its sample id leads the prompt), a batch at a time."""

    needs_frames = False
    batch_size = 4

    def right(self, request: Request) -> Response:
        return Response(request.key, GOLD[int(request.sample_id[1:])])

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self.right(r) for r in requests]


class Reversed(Gold):
    largest = 0  # the most requests it was given at once

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        Reversed.largest = max(Reversed.largest, len(requests))
        return [self.right(r) for r in reversed(requests)]  # keyed: the order does not matter


class Fewer(Gold):
    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self.right(r) for r in requests if r.sample_id != "q1"]


class Raises(Gold):
    batch_size = 1  # the other requests are not in q1's batch

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        if any(r.sample_id == "q1" for r in requests):
            raise RuntimeError("device out of memory")
        return [self.right(r) for r in requests]


class NotText(Gold):
    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [
            Response(r.key, {"text": "B"}) if r.sample_id == "q1" else self.right(r)  # type: ignore[arg-type]
            for r in requests
        ]


def run_letters(model: str, data: Path, out: Path, task: Task | None = None) -> RunOutcome:
    config = RunConfig("letters", str(data), model, str(out), progress=False, concurrency=1)
    return Run(config, task or Letters()).run()


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, (out / "samples.jsonl").open())}


def test_a_backend_answering_out_of_order_gives_each_sample_its_own_answer(
    tmp_path: Path,
) -> None:
    done = run_letters(f"{MODELS}:Reversed", tmp_path, tmp_path / "out")
    assert done.complete and Reversed.largest > 1
    found = rows(tmp_path / "out")
    assert {i: r["raw_output"] for i, r in found.items()} == {
        "q0": "A",
        "q1": "B",
        "q2": "C",
        "q3": "A",
    }
    assert {r["outcome"]["kind"] for r in found.values()} == {"correct"}


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("Fewer", "generate() returned no Response for this request"),
        ("Raises", "generate() raised RuntimeError('device out of memory')"),
        ("NotText", "its Response's text is a dict, not a str"),
    ],
)
def test_a_backend_that_breaks_its_contract_fails_those_requests_naming_it(
    model: str, said: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = run_letters(f"{MODELS}:{model}", tmp_path, out)
    assert not done.complete
    found = rows(out)
    failed = {i for i, r in found.items() if r["status"] != "ok"}
    assert failed == {"q1"}
    spec = f"{MODELS}:{model}"
    assert found["q1"]["error"] == f"q1: model {spec!r} (test_plugin_mistakes.{model}): {said}"
    assert {i: r["raw_output"] for i, r in found.items() if i not in failed} == {
        i: GOLD[int(i[1:])] for i in found if i not in failed
    }
    results = json.loads((out / "results.json").read_text())
    assert (results["n"], results["errors"], results["errors_by_status"]) == (4, 1, {"error": 1})


def test_a_judge_backend_that_raises_gives_an_error_verdict_naming_it(tmp_path: Path) -> None:
    """The judge's calls go through the same check: the call fails, the others are asked."""
    calls = [
        ModelCall(f"q{i}", (Message("user", (TextPart(f"q{i}: judge"),)),), "v1", str.strip)
        for i in range(3)
    ]
    judge = Raises()
    judge.spec = "raises"
    with Store(tmp_path) as store:
        verdicts = ask_model(judge, calls, store, concurrency=1)
    assert {item: v.status for item, v in verdicts.items()} == {
        "q0": "ok", "q1": "error", "q2": "ok",
    }  # fmt: skip
    assert verdicts["q1"].error == (
        "model 'raises' (test_plugin_mistakes.Raises): generate() raised "
        "RuntimeError('device out of memory')"
    )


class ScoreRaises(Letters):
    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        if sample.id == "q1":
            raise KeyError("subtask")
        return super().score(sample, reply, verdicts)


class ScoreAllRaises(Letters):
    def score_all(
        self, items: Sequence[tuple[Sample, str, Mapping[str, CallResult[object]]]]
    ) -> list[SampleScore]:
        raise ZeroDivisionError("division by zero")


class ScoreNeedsAMetric(Letters):
    def score(
        self, sample: Sample, reply: str, verdicts: Mapping[str, CallResult[object]]
    ) -> SampleScore:
        raise ConfigError("the CIDEr scorer needs pycocoevalcap")


def test_a_scorer_that_raises_fails_that_sample_alone_keeping_its_answer(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    done = run_letters(f"{MODELS}:Gold", tmp_path, out, ScoreRaises())
    assert not done.complete and done.scorer_failed
    found = rows(out)
    assert {i for i, r in found.items() if r["status"] == "ok"} == {"q0", "q2", "q3"}
    assert found["q1"]["error"] == (
        "q1: task letters (test_plugin_mistakes.ScoreRaises): score() raised KeyError('subtask')"
    )
    assert found["q1"]["status"] == "score" and found["q1"]["raw_output"] == "B"
    assert found["q1"]["outcome"] == {"kind": "unscored", "reason": "score-failed"}
    results = json.loads((out / "results.json").read_text())
    assert (results["n"], results["n_scored"], results["errors_by_status"]) == (4, 3, {"score": 1})
    assert results["columns"]["Accuracy"] == pytest.approx(100.0)  # of the three scored

    again = run_letters(f"{MODELS}:Gold", tmp_path, out)  # fixed: its answers scored, none asked
    assert again.complete
    assert json.loads((out / "results.json").read_text())["n_scored"] == 4


def test_a_whole_set_scorer_that_raises_fails_its_batch_naming_the_task(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_letters(f"{MODELS}:Gold", tmp_path, out, ScoreAllRaises())
    assert not done.complete
    found = rows(out)
    assert {r["status"] for r in found.values()} == {"score"}
    assert found["q2"]["error"] == (
        "q2: task letters (test_plugin_mistakes.ScoreAllRaises): score_all() raised "
        "ZeroDivisionError('division by zero')"
    )


def test_a_scorer_missing_what_it_needs_still_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs pycocoevalcap"):
        run_letters(f"{MODELS}:Gold", tmp_path, tmp_path / "out", ScoreNeedsAMetric())


class GivesADict(Letters):
    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        for item in super().iter_load(data):
            if isinstance(item, Sample) and item.id == "q1":
                yield {"id": "q1"}  # type: ignore[misc]  # the mistake
            else:
                yield item


class RaisesMidway(Letters):
    def iter_load(self, data: Path) -> Iterator[Sample | Problem]:
        for item in super().iter_load(data):
            if isinstance(item, Sample) and item.id == "q2":
                raise ValueError("row 3 has no 'shape'")
            yield item


def test_a_loader_giving_no_sample_or_raising_midway_is_named_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    gave = run_letters(f"{MODELS}:Gold", tmp_path, tmp_path / "dict", GivesADict())
    assert not gave.complete
    found = rows(tmp_path / "dict")
    assert {i for i, r in found.items() if r["status"] == "ok"} == {"q0", "q2", "q3"}
    assert found["record 2"]["error"] == (
        "record 2: task letters (test_plugin_mistakes.GivesADict): its loader gave a dict, not "
        f"a Sample or a Problem [{tmp_path}]"
    )

    raised = run_letters(f"{MODELS}:Gold", tmp_path, tmp_path / "raised", RaisesMidway())
    assert not raised.complete
    found = rows(tmp_path / "raised")
    assert {i for i, r in found.items() if r["status"] == "ok"} == {"q0", "q1"}
    assert found[""]["status"] == "data" and found[""]["error"] == (
        "task letters (test_plugin_mistakes.RaisesMidway): its loader raised "
        "ValueError(\"row 3 has no 'shape'\") after 2 record(s); the rest were not read "
        f"[{tmp_path}]"
    )
    results = json.loads((tmp_path / "raised" / "results.json").read_text())
    assert (results["n_scored"], results["errors"]) == (2, 1)


class PromptRaises(Letters):
    def build_messages(self, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
        if sample.id == "q1":
            raise IndexError("tuple index out of range")
        return super().build_messages(sample, frames)


def test_a_task_failing_on_one_prompt_fails_that_sample_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_letters(f"{MODELS}:Gold", tmp_path, out, PromptRaises())
    assert not done.complete
    found = rows(out)
    assert {i for i, r in found.items() if r["status"] == "ok"} == {"q0", "q2", "q3"}
    assert found["q1"]["status"] == "prompt" and found["q1"]["error"] == (
        "q1: task letters (test_plugin_mistakes.PromptRaises): build_messages() raised "
        "IndexError('tuple index out of range')"
    )


class RepeatsIds(Letters):
    def load(self, data: Path) -> Loaded[Sample]:
        samples = super().load(data).items
        return Loaded(
            [dataclasses.replace(s, id="q0" if s.id == "q1" else s.id) for s in samples], []
        )


def test_a_loader_giving_two_samples_one_id_stops_before_any_call(tmp_path: Path) -> None:
    """Answers are kept by sample id: two samples with one id would share an answer, and the
    results would look complete."""
    with pytest.raises(ConfigError) as stopped:
        run_letters(f"{MODELS}:Gold", tmp_path, tmp_path / "out", RepeatsIds())
    assert str(stopped.value) == (
        f"task letters (test_plugin_mistakes.RepeatsIds) gave samples that share an id, reading "
        f"{tmp_path} ('q0': samples 1, 2): each sample needs an id of its own (answers are kept "
        "by id, so two would share one); nothing was run"
    )
    assert not (tmp_path / "out" / "samples.jsonl").exists()


BACKENDS = """
from pathlib import Path

from test_plugin_mistakes import Gold


class PathIdentity(Gold):
    def identity(self):
        return {"spec": self.spec, "weights": Path("/models/x")}


class StartRaises(Gold):
    async def start(self):
        raise RuntimeError("server at 127.0.0.1:9 refused")


def build_raises(arg, options):
    return {}["weights"]


def path_identity(arg, options):
    model = PathIdentity()
    model.spec = "pathid:" + arg
    return model


def start_raises(arg, options):
    model = StartRaises()
    model.spec = "startraises:" + arg
    return model
"""


@pytest.fixture
def backends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Three backend plugins installed (on the path, with their entry points)."""
    entry_points = (
        "[vidbench.models]\nbuildraises = badbackends:build_raises\n"
        "pathid = badbackends:path_identity\nstartraises = badbackends:start_raises\n"
    )
    fake_plugin(tmp_path / "site", "badbackends", entry_points, {"badbackends": BACKENDS})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model_registry.plugins.cache_clear()
    yield
    model_registry.plugins.cache_clear()


def test_a_backend_failing_to_build_start_or_say_its_identity_is_named(backends: None) -> None:
    with pytest.raises(ConfigError) as built:
        load_model("buildraises:x")
    assert str(built.value) == (
        "model 'buildraises:x': model backend plugin buildraises (badbackends:build_raises) "
        "raised KeyError('weights')"
    )
    with pytest.raises(ConfigError) as identity:
        load_model("pathid:x")
    assert str(identity.value) == (
        "model 'pathid:x' (badbackends.PathIdentity): identity() must be a dict of JSON values; "
        "weights: input was not a valid JSON value (PosixPath)"
    )
    model = load_model("startraises:x")
    with pytest.raises(ConfigError) as started:
        check_reachable(model)
    assert str(started.value) == (
        "model 'startraises:x' (badbackends.StartRaises): start() raised "
        "RuntimeError('server at 127.0.0.1:9 refused')"
    )


def make_raises(request: TaskRequest) -> Task:
    raise KeyError("frames")


def test_a_task_factory_that_raises_or_makes_no_task_is_named() -> None:
    entry = TaskEntry(make_raises, Letters.frame_spec, lambda spec, modifier: None, ())
    with pytest.raises(ConfigError) as raised:
        build_task({"letters": entry}, "letters")
    assert str(raised.value) == (
        "task letters: its factory test_plugin_mistakes.make_raises raised KeyError('frames')"
    )
    not_a_task = dataclasses.replace(entry, make=lambda request: "letters")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="<lambda> made a str, not a vidbench Task"):
        build_task({"letters": not_a_task}, "letters")


MALFORMED = """
from vidbench import Benchmark


def validate_raises(root, show_progress=False, frames=None):
    raise KeyError("video")


VALIDATE = Benchmark(name="badval", title="BadVal", tasks={}, validate=validate_raises)
LISTED = Benchmark(name="listed", title="Listed", tasks=[("listed-qa", None)], validate=print)
"""


def test_a_malformed_benchmark_is_skipped_and_a_validate_that_raises_named(
    tmp_path: Path,
) -> None:
    entry_points = "[vidbench.benchmarks]\nbadval = malformed:VALIDATE\nlisted = malformed:LISTED\n"
    site = fake_plugin(tmp_path / "site", "malformed", entry_points, {"malformed": MALFORMED})
    listed = run_vidbench([site], "tasks")
    assert listed.returncode == 0, listed.stderr  # every other benchmark still listed
    assert "4dbench-qa" in listed.stdout
    assert refused(listed.stderr) == [
        "skipped benchmark plugin listed (malformed:LISTED): its tasks must be a mapping of "
        "names to TaskEntry values (it is a list)"
    ]
    checked = run_vidbench([site], "validate", "badval", str(tmp_path))
    assert checked.returncode == 1
    assert " ".join(checked.stderr.split()).endswith(
        "error: benchmark badval (plugin badval (malformed:VALIDATE)): its validate raised "
        "KeyError('video')"
    )


class JudgeCallsRaise(Letters):
    uses_judge = True
    judge_optional = True

    def judge_calls(self, sample: Sample, reply: str) -> Sequence[ModelCall[object]]:
        if sample.id == "q1":
            raise ValueError("no rubric for q1")
        return ()


def test_judge_calls_that_raise_fail_that_sample_alone(tmp_path: Path) -> None:
    """The judge stage asks about the others; the score stage names the sample it skipped."""
    out = tmp_path / "out"
    config = RunConfig("letters", str(tmp_path), f"{MODELS}:Gold", str(out), progress=False,
                       judge=f"{MODELS}:Gold")  # fmt: skip
    done = Run(config, JudgeCallsRaise()).run()
    assert not done.complete and done.scorer_failed
    found = rows(out)
    assert {i for i, r in found.items() if r["status"] == "ok"} == {"q0", "q2", "q3"}
    assert found["q1"]["error"] == (
        "q1: task letters (test_plugin_mistakes.JudgeCallsRaise): judge_calls() raised "
        "ValueError('no rubric for q1')"
    )


class ColumnsRaise(Letters):
    def column_values(self, scores: Sequence[SampleScore]) -> dict[str, list[float]]:
        if scores:
            raise ValueError("no such column")
        return {"Accuracy": []}


class TallyRaises(Letters):
    def results_tally(self) -> ResultsTally:
        return BrokenTally()


class BrokenTally(ResultsTally):
    def add(self, scores: Sequence[SampleScore]) -> None:
        raise KeyError("subtask")

    def fields(self, values: Mapping[str, Sequence[float]]) -> Mapping[str, Json]:
        return {}


class CorpusRaises(Letters):
    def corpus_columns(self, scores: Sequence[SampleScore]) -> dict[str, float]:
        raise RuntimeError("corpus BLEU needs Java")


@pytest.mark.parametrize(
    ("task", "method", "error"),
    [
        (ColumnsRaise(), "column_values()", "ValueError('no such column')"),
        (TallyRaises(), "results_tally().add()", "KeyError('subtask')"),
        (CorpusRaises(), "corpus_columns()", "RuntimeError('corpus BLEU needs Java')"),
    ],
)
def test_a_task_whose_results_code_raises_is_named_and_its_answers_kept(
    tmp_path: Path, task: Letters, method: str, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task's own results code (columns, tally, corpus columns) that raises stops the results
    naming the task, its code and the method; no results look complete, and once the code is
    fixed the same command writes them from the stored answers, asking the model nothing."""
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as raised:
        run_letters(f"{MODELS}:Gold", tmp_path, out, task)
    code = f"test_plugin_mistakes.{type(task).__name__}"
    assert str(raised.value).startswith(f"task letters ({code}): {method} raised {error}")
    assert not (out / "results.json").exists()
    with sqlite3.connect(out / Store.FILENAME) as db:
        assert db.execute("SELECT count(*) FROM responses").fetchone() == (4,)

    capsys.readouterr()
    assert run_letters(f"{MODELS}:Gold", tmp_path, out).complete  # the task fixed
    assert "infer: 0 answered, 4 reused from the store" in capsys.readouterr().err
    assert json.loads((out / "results.json").read_text())["columns"]["Accuracy"] == 100.0
