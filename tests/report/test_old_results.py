"""Results directories written before the typed schema (tests/data/results-v0, written by
commit 00c7126: no schema_version, no outcome, rounded results.json) still read: as typed rows
with the outcome their fields say, in `vidbench report`, `view` and `compare`; re-reported, they
print the very tables they printed then, and their new results.json is typed and unrounded."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.report.results_dir import ResultsDir
from vidbench.report.schema import SCHEMA_VERSION
from vidbench.runner.run_config import RunConfig

OLD = Path(__file__).parents[1] / "data" / "results-v0"
TABLES = ("table.md", "table.csv", "table.tex")
# What each run's samples were (tests/data/results-v0/make.py scripted them), by outcome label.
OUTCOMES = {
    # right x3, wrong x2, no option x2; HTTP 400, no text, refusal, bad record: no answer
    "4dbench-qa": {"correct": 3, "wrong": 2, "unparsed": 2, "no-answer": 4},
    "4dbench-qa-runs/run-1": {"correct": 2, "wrong": 3, "no-answer": 1},
    "4dbench-qa-runs/run-2": {"wrong": 5, "no-answer": 1},
    # rule-scored right/wrong; unreadable answers the judge said yes (correct) or no (unparsed)
    # to, never answered readably (verdict-unparsed), or failed on (no-verdict); two HTTP 400s
    "mmworld-judge-fallback": {
        "correct": 3,
        "wrong": 3,
        "unparsed": 2,
        "verdict-unparsed": 2,
        "no-verdict": 2,
        "no-answer": 2,
    },
    # verdicts 1 and 0, two never readable (robust: wrong; official: dropped), two failed calls,
    # the empty answer (robust: wrong unasked; official: judged, 1)
    "autoeval-video-robust": {"correct": 3, "wrong": 3, "verdict-unparsed": 2, "no-verdict": 2},
    "autoeval-video-official": {"correct": 4, "wrong": 2, "verdict-unparsed": 2, "no-verdict": 2},
    # caption metrics (one reply without "caption:"), one object whose judge call failed
    "4dbench-caption": {"not-graded": 2, "no-verdict": 1},
}
KINDS = {
    "autoeval-video-robust": {"correct": 3, "wrong": 5, "unscored": 2},
    "autoeval-video-official": {"correct": 4, "wrong": 2, "unscored": 4},
}
SINGLE = [name for name in OUTCOMES if "/" not in name]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A copy of the old directories: reading and re-reporting them writes files."""
    copy = tmp_path / "old"
    shutil.copytree(OLD, copy, ignore=shutil.ignore_patterns("make.py", "README.md"))
    return copy


def _vidbench(*args: str | Path) -> int:
    return main(["--no-progress", *map(str, args)])


def test_old_files_read_as_typed_rows_results_and_configs(old: Path) -> None:
    for name, expected in OUTCOMES.items():
        directory = ResultsDir(old / name)
        raw = (old / name / "samples.jsonl").read_text()
        assert "schema_version" not in raw and "outcome" not in raw  # written before both
        rows = directory.read_samples()
        assert dict(Counter(row.outcome.label for row in rows)) == expected, name
        assert {row.schema_version for row in rows} == {SCHEMA_VERSION}
        if name in KINDS:
            assert dict(Counter(row.outcome.kind for row in rows)) == KINDS[name]
        results = directory.read_results()
        assert results.errors == sum(1 for row in rows if row.failed), name
        assert RunConfig.load(old / name).task == results.task
    repeated = ResultsDir(old / "4dbench-qa-runs").read_results()
    assert repeated.runs == 2 and repeated.std is not None and len(repeated.per_run or []) == 2


@pytest.mark.slow
def test_old_runs_rereported_print_the_tables_they_printed(old: Path) -> None:
    for name in SINGLE:
        before = json.loads((old / name / "results.json").read_text())
        args = ["--runs", "2"] if name == "4dbench-qa-runs" else []
        # every one of them has errors (scripted): the run says its results are incomplete
        assert _vidbench("run", "--out", old / name, "--stage", "report", *args) == EXIT_INCOMPLETE
        runs = ["", "run-1/", "run-2/"] if args else [""]
        for run in runs:
            for table in TABLES:
                assert (old / name / run / table).read_text() == (
                    OLD / name / run / table
                ).read_text(), f"{name}/{run}{table}"
        after = json.loads((old / name / "results.json").read_text())
        assert after["schema_version"] == SCHEMA_VERSION
        for key in ("task", "model", "n", "errors", "errors_by_status", "unparsed", "column_n"):
            assert after[key] == before[key], (name, key)
        for column, value in before["columns"].items():
            new = after["columns"][column]
            # what the old report stage kept: percent to 2 decimals, other scales and
            # GPT-Eval (a corpus column) to 3
            percent = after["column_scale"][column] == 100 and column != "GPT-Eval"
            digits = 2 if percent else 3
            assert (value is None and new is None) or round(new, digits) == value, (name, column)


@pytest.mark.slow
def test_report_view_and_compare_read_old_runs(old: Path, tmp_path: Path) -> None:
    for name in SINGLE:
        assert _vidbench("report", old / name, "--out", tmp_path / name) == 0
        for table in TABLES:
            assert (tmp_path / name / table).read_text() == (OLD / name / table).read_text()
    report = tmp_path / "report"
    runs = [old / name for name in OUTCOMES]
    assert _vidbench("view", *runs, "--out", report, "--videos", "none", "--no-thumbnails") == 0
    meta = (report / "data" / "meta.js").read_text()
    shown = json.loads(meta[len("vidbenchView.meta(") : -3])
    for run, name in zip(shown["runs"], OUTCOMES, strict=True):
        assert {k: v for k, v in run["outcomes"].items() if v} == OUTCOMES[name], name
    assert len(shown["tables"]) == 4  # one per task and data: the QA runs share one, so do
    # the two AutoEval-Video protocols
    robust, official = old / "autoeval-video-robust", old / "autoeval-video-official"
    assert _vidbench("compare", robust, official, "--out", tmp_path / "cmp") == 0
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert compared["paired_samples"] == 8  # the answers both scored (no failed verdict)
