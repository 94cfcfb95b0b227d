"""The typed results files (report/schema.py): every task's scorer returns a SampleScore with the
shared outcome; rows keep a task's own fields in their typed places; files that do not fit say
where; run.json's model is RunConfig's; results.json keeps full precision and the tables round."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.mmworld.task import MMWorld, MMWorldOptions
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.records import MediaRef, Sample
from vidbench.registry import get_task
from vidbench.report.results import build_results
from vidbench.report.results_dir import ResultsDir, read_sample_rows
from vidbench.report.schema import (
    SCHEMA_VERSION,
    ErrorDetail,
    PerRun,
    Results,
    RunFile,
    SampleRow,
)
from vidbench.report.schema_doc import render
from vidbench.report.tables import to_csv, to_markdown
from vidbench.runner.run_config import RUN_PLACE, RunConfig
from vidbench.scoring.judge import no_verdict_fields
from vidbench.scoring.model_call import CallResult
from vidbench.scoring.outcome import NOT_GRADED, Outcome, SampleScore, graded


def _row(sample_id: str, score: SampleScore) -> SampleRow:
    answer = {"id": sample_id, "prompt_hash": "h", "frames": [], "raw_output": "(A)"}
    return SampleRow.scored(answer, score)  # type: ignore[arg-type]  # a plain dict for brevity


def _outcome(kind: str, reason: str | None = None) -> Outcome:
    return Outcome(kind=kind, reason=reason)  # type: ignore[arg-type]


def test_an_outcome_reason_must_fit_its_kind() -> None:
    assert _outcome("wrong", "unparsed").label == "unparsed"
    assert _outcome("correct").label == "correct" and _outcome("correct").graded
    assert not _outcome("unscored", "no-answer").graded
    for kind, reason in [("correct", "unparsed"), ("unscored", None), ("wrong", "no-answer"),
                         ("wrong", "later")]:  # fmt: skip
        with pytest.raises(ValidationError):
            _outcome(kind, reason)


def _sample(answer: str, options: tuple[str, ...], metadata: dict[str, Any]) -> Sample:
    return Sample("u_motion", "b", "mcq", MediaRef.single(Path("v.mp4")), "What moves?",
                  options, answer, metadata=metadata)  # fmt: skip


def test_each_task_sets_the_outcome_of_its_score() -> None:
    """4D-Bench QA, MMWorld (rule and judge), AutoEval-Video's rules judge and the judged
    tasks' missing verdicts: each score's typed outcome, and `correct` (what right/wrong
    columns count) follows from it."""
    qa = get_task("4dbench-qa")
    options = ("red ball", "blue cube", "green cone", "pink star")
    sample = _sample("B", options, {"subtask": "Action"})
    records = [qa.score(sample, reply, {}) for reply in ("(B)", "(C)", "It is hard to say.")]
    assert [r.outcome.label for r in records] == ["correct", "wrong", "unparsed"]
    assert [r.correct for r in records] == [True, False, False]
    assert records[0].groups == {"subtask": "Action"} and records[0].parsed == "B"

    meta = {"video_id": "v", "discipline": "Game", "facet": "Explanation", "flags": {},
            "labels": ["a", "b", "c", "d"]}  # fmt: skip
    sample = _sample("b", options, meta)
    spec = get_task("mmworld").frame_spec
    rule = MMWorld("mmworld:rule", spec, qa.generation, MMWorldOptions(scoring="rule"))
    judged = MMWorld("mmworld", spec, qa.generation, MMWorldOptions())
    item = f"{sample.id}:judge"
    verdicts = [CallResult(item, "ok", value=v, reply="yes") for v in (True, False)]
    verdicts += [CallResult(item, "unparsed", reply="hm"), CallResult(item, "error", error="x")]
    unreadable = "It is hard to say."
    records += [rule.score(sample, "(b)", {}), rule.score(sample, unreadable, {})]
    records += [judged.score(sample, unreadable, {item: v}) for v in verdicts]
    labels = [r.outcome.label for r in records[3:]]
    assert labels == ["correct", "unparsed", "correct", "unparsed", "verdict-unparsed",
                      "no-verdict"]  # fmt: skip

    judgment = rules.Judgment(1, "fine")
    protocols = (rules.PROTOCOLS["robust"], rules.PROTOCOLS["official"])
    for protocol in protocols:
        for verdict in (CallResult("7", "ok", value=judgment, reply="fine\n1"),
                        CallResult("7", "ok", value=rules.Judgment(0, ""), reply="0"),
                        CallResult("7", "unparsed", reply="?"),
                        CallResult("7", "missing")):  # fmt: skip
            records.append(rules.outcome(verdict, protocol))
    records.append(rules.empty_outcome())
    labels = [(r.outcome.kind, r.outcome.label) for r in records[9:]]
    assert labels == [
        ("correct", "correct"), ("wrong", "wrong"), ("wrong", "verdict-unparsed"),
        ("unscored", "no-verdict"),  # robust: an unreadable verdict counts as wrong
        ("correct", "correct"), ("wrong", "wrong"), ("unscored", "verdict-unparsed"),
        ("unscored", "no-verdict"),  # official: it is dropped
        ("wrong", "wrong"),  # an empty answer under `robust`: wrong, never asked
    ]  # fmt: skip
    assert [r.correct for r in records[9:13]] == [True, False, False, None]
    assert records[15].correct is None  # official: a dropped verdict counts neither way
    absent = no_verdict_fields("u", CallResult("u:appearance:1", "error", error="x"))
    caption = SampleScore(outcome=NOT_GRADED, unparsed=True, metrics={"bleu": 0.2})
    assert SampleScore(metrics={"bleu": 0.2}, **absent).outcome.label == "no-verdict"
    assert caption.correct is None and not caption.outcome.graded


def test_a_score_is_typed_and_takes_no_loose_field() -> None:
    with pytest.raises(ValidationError, match="correct"):
        SampleScore(outcome=graded(True), correct=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="groups.subtask"):
        SampleScore(outcome=graded(True), groups={"subtask": 3})  # type: ignore[dict-item]
    score = SampleScore(outcome=graded(True), details={"probe": {"parts": 3, "seed": [1, 2]}})
    with pytest.raises(ValidationError, match="frozen"):
        score.parsed = "A"  # type: ignore[misc]
    assert SampleScore.model_validate(score.model_dump(mode="json")) == score


def test_rows_keep_a_tasks_own_fields_and_say_what_does_not_fit(tmp_path: Path) -> None:
    score = SampleScore(outcome=graded(True), parsed="a", groups={"discipline": "Game"},
                        details={"flags": ["Counterfactual"]})  # fmt: skip
    row = SampleRow.scored({"id": "7", "prompt_hash": "h", "frames": [], "raw_output": "a"}, score)
    record = row.record()
    assert list(record)[:3] == ["schema_version", "id", "status"]  # the run's fields first
    assert record["id"] == "7" and record["schema_version"] == SCHEMA_VERSION
    assert record["outcome"] == {"kind": "correct", "reason": None}
    assert record["groups"] == {"discipline": "Game"} and "judge_reply" not in record  # never set
    assert record["details"] == {"flags": ["Counterfactual"]}
    assert SampleRow.model_validate(json.loads(json.dumps(record))) == row
    assert row.correct is True and not row.failed
    path = tmp_path / "samples.jsonl"
    bad = {**record, "id": "b", "outcome": {"kind": "right"}}
    loose = {**record, "id": "c", "discipline": "Game"}  # a field outside the typed places
    path.write_text("\n".join(json.dumps(r) for r in (record, bad)) + "\n")
    with pytest.raises(DataError, match=r"samples.jsonl line 2: outcome.kind: Input should be"):
        read_sample_rows(path)
    path.write_text("\n".join(json.dumps(r) for r in (record, loose)) + "\n")
    with pytest.raises(DataError, match=r"line 2: discipline: Extra inputs are not permitted"):
        read_sample_rows(path)
    unversioned = {k: v for k, v in record.items() if k != "schema_version"}
    path.write_text(json.dumps(unversioned) + "\n")
    assert read_sample_rows(path) == [row]  # a file without a version is of this version


def test_a_newer_schema_version_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps({"schema_version": 99, "task": "t"}))
    with pytest.raises(ConfigError, match="results.json: schema_version 99 is not one"):
        ResultsDir(tmp_path).read_results()
    (tmp_path / "results.json").write_text(json.dumps({"task": "t", "n": "ten"}))
    with pytest.raises(ConfigError, match=r"results.json: model: Field required \(and 3 more"):
        ResultsDir(tmp_path).read_results()


def test_run_json_holds_what_run_config_saves(tmp_path: Path) -> None:
    saved = {f.name for f in dataclasses.fields(RunConfig)} - set(RUN_PLACE)
    assert set(RunFile.model_fields) == saved | {"schema_version"}
    config = RunConfig(task="4dbench-qa", data="d", model="random", out=str(tmp_path),
                       frames={"views": [1, 8]}, judge_options={"backoff": "0.1"})  # fmt: skip
    config.save()
    written = json.loads((tmp_path / "run.json").read_text())
    assert written["schema_version"] == SCHEMA_VERSION and "progress" not in written
    assert RunConfig.load(tmp_path) == config
    (tmp_path / "run.json").write_text(json.dumps(written | {"colour": "red"}))
    with pytest.raises(ConfigError, match="run.json: colour: Extra inputs are not permitted"):
        RunConfig.load(tmp_path)


def test_results_keep_full_precision_and_tables_round(tmp_path: Path) -> None:
    task = get_task("4dbench-qa")
    rows = [
        _row(
            f"s{i}",
            SampleScore(
                outcome=graded(i < 3, unparsed=i == 6),
                unparsed=i == 6,
                groups={"subtask": "Action"},
            ),
        )
        for i in range(7)
    ]
    rows.append(SampleRow.unanswered("bad", "data", "bad record"))
    results = build_results(task, {"spec": "m"}, rows, seed=0)
    ResultsDir(tmp_path).write_results(results)
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["columns"]["Overall"] == 100 * 3 / 7  # 42.857142857142854, not 42.86
    low, high = written["ci95"]["Overall"]
    assert [low, high] == results.ci95["Overall"]
    assert any(round(v, 2) != v for v in (low, high))  # unrounded too
    assert written["column_scale"]["Overall"] == 100.0
    assert (written["errors"], written["unparsed"], written["n_scored"]) == (1, 1, 7)
    assert written["schema_version"] == SCHEMA_VERSION
    assert Results.model_validate(written) == results
    row = "m (incomplete: 1 of 8 not scored) | — | — | 42.9 | — | — | 42.9 | 8 | 1 | 1 |"
    assert f"| {row}" in to_markdown([results])
    assert "m (incomplete: 1 of 8 not scored),—,—,42.9,—,—,42.9,8,1,1" in to_csv([results])
    assert (tmp_path / "table.md").read_text() == to_markdown([results])


def test_the_schema_page_is_the_models_own() -> None:
    """docs/results-schema.md is what report/schema_doc.py writes from the models today, and
    every shared field has a meaning there."""
    page = Path(__file__).parents[2] / "docs" / "results-schema.md"
    assert page.read_text() == render(), "run: python -m vidbench.report.schema_doc " + str(page)
    for model in (RunFile, SampleRow, SampleScore, Outcome, Results, ErrorDetail, PerRun):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} says nothing"
            assert f"| `{name}` |" in page.read_text()
    for reason in ("no-answer", "unparsed", "no-verdict", "verdict-unparsed", "not-graded"):
        assert f"| `{reason}` |" in page.read_text()
