"""A task's own results fields (chance levels, counts) are tallied a batch of scores at a time
(tasks/tally.py): the report holds none of a declared benchmark's, MMWorld's or
AutoEval-Video's rows, and what it writes does not depend on the batch sizes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autoeval_support import judging, write_jsonl
from autoeval_support import rows as autoeval_rows
from custom_support import make_bench
from mmworld_support import make_mmworld
from vidbench.cli import main
from vidbench.registry import get_task
from vidbench.report import results as results_module
from vidbench.report.results import RowTally
from vidbench.report.schema import SampleRow
from vidbench.runner import score as score_module
from vidbench.testing.chat_server import ChatServer


def _results(out: Path) -> dict[str, Any]:
    results = json.loads((out / "results.json").read_text())
    del results["created"]
    return results


def _twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: list[str]) -> dict[str, Any]:
    """`vidbench run ...` with the usual batches, then with 2 rows a batch: the same
    results.json (returned), also from a report stage alone that reads samples.jsonl back."""
    assert main(["--no-progress", *run, "--out", str(tmp_path / "whole")]) == 0
    whole = _results(tmp_path / "whole")
    with monkeypatch.context() as patch:
        patch.setattr(score_module, "SCORE_BATCH", 2)
        patch.setattr(results_module, "ROW_BATCH", 2)
        assert main(["--no-progress", *run, "--out", str(tmp_path / "batched")]) == 0
        assert _results(tmp_path / "batched") == whole
        report = ["--no-progress", "run", "--out", str(tmp_path / "batched"), "--stage", "report"]
        assert main(report) == 0
        assert _results(tmp_path / "batched") == whole
    return whole


def _rows(out: Path) -> list[SampleRow]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return [SampleRow.model_validate_json(line) for line in lines]


def _keeps_no_row(task_name: str, out: Path) -> None:
    """The report of this task holds no row, and its tally gives what the task's fields over
    every row at once (`extra_results`) give."""
    task = get_task(task_name)
    tally = RowTally(task)
    assert tally.scored is None and tally.extra is not None
    rows = _rows(out)
    for row in rows:  # one at a time
        tally.add([row])
    scored = [row for row in rows if not row.failed]
    assert tally.extra_fields(tally.values()) == task.extra_results(scored)


def test_a_declared_benchmarks_chance_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = make_bench(tmp_path / "bench")
    whole = _twice(tmp_path, monkeypatch, ["run", f"custom:{bench}", "--model", "random"])
    # 4 options a question: the random-choice baseline's expected accuracy is 25 everywhere
    assert whole["chance"] == {"Overall": 25.0, "garden": 25.0, "kitchen": 25.0}
    assert whole["scoring"]["no_gold"] == 0 and whole["benchmark"]["name"] == "my-bench"
    _keeps_no_row(f"custom:{bench}", tmp_path / "whole")


def test_mmworlds_chance_judged_counts_and_difficulty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = make_mmworld(tmp_path / "data")
    run = ["run", "mmworld:rule", "--data", str(data), "--model", "random-choice"]
    whole = _twice(tmp_path, monkeypatch, run)
    assert whole["chance"]["Average"] is not None and whole["scoring"]["judged"] == 0
    assert whole["columns_unrounded"]["Average"] == pytest.approx(whole["columns"]["Average"])
    _keeps_no_row("mmworld:rule", tmp_path / "whole")


def test_autoeval_videos_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = write_jsonl(tmp_path / "AUTO-EVAL-VIDEO.json", autoeval_rows()[:7])
    answers = [{"ID": r["ID"], "prediction": f"answer {r['ID']}"} for r in autoeval_rows()[:7]]
    answers[2]["prediction"] = " "  # an empty answer: counted wrong, not asked
    predictions = write_jsonl(tmp_path / "pred.jsonl", answers)
    with ChatServer(reply="Fine.\n1") as server:
        whole = _twice(tmp_path, monkeypatch, [str(a) for a in judging(server, rules, predictions)])
    assert (whole["n_judged"], whole["n_empty_answers"], whole["n_judge_errors"]) == (7, 1, 0)
    _keeps_no_row("autoeval-video", tmp_path / "whole")
