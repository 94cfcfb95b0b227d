"""A run scores, tallies and bootstraps its samples a bounded batch at a time
(runner/score.py, report/results.py, scoring/stats.py): what it writes must not depend on the
batch sizes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vidbench.cli import main
from vidbench.media import frames as frames_module
from vidbench.media.cache import FrameCache
from vidbench.registry import get_task
from vidbench.report import results as results_module
from vidbench.runner import score as score_module
from vidbench.runner.prepare import Preparation
from vidbench.scoring import stats


def test_resampled_means_in_blocks_are_those_drawn_at_once(monkeypatch) -> None:
    data = np.random.default_rng(1).random(10)
    at_once = data[np.random.default_rng(5).integers(0, 10, size=(50, 10))].mean(axis=1)
    monkeypatch.setattr(stats, "FEW_LEVELS", 0)  # 10 distinct values: through the indices
    monkeypatch.setattr(stats, "RESAMPLE_BLOCK", 37)  # 3 resamples a block, the last one 2
    in_blocks = stats.resampled_means(data, 50, seed=5)
    assert in_blocks.shape == (50,)
    assert np.array_equal(in_blocks, at_once)


def _run(data: Path, out: Path, cache: Path) -> dict[str, object]:
    args = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", "random"]
    assert main([*args, "--out", str(out), "--cache-dir", str(cache)]) == 0
    results = json.loads((out / "results.json").read_text())
    del results["created"]
    return results


def test_batch_sizes_change_nothing_written(
    qa_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    whole = _run(qa_release, tmp_path / "whole", cache)  # 20 samples: one batch each stage
    monkeypatch.setattr(score_module, "SCORE_BATCH", 3)
    monkeypatch.setattr(results_module, "ROW_BATCH", 4)
    monkeypatch.setattr(stats, "RESAMPLE_BLOCK", 7)  # one resample of 20 values at a time
    batched = _run(qa_release, tmp_path / "batched", cache)
    assert batched == whole
    assert whole["n"] == 20 and whole["column_n"]["Overall"] == 20  # type: ignore[index]
    written = [(tmp_path / run / "samples.jsonl").read_bytes() for run in ("whole", "batched")]
    assert written[0] == written[1] and written[0].count(b"\n") == 20
    # the run's report stage tallied the rows as its score stage wrote them; the report stage
    # alone reads them back from samples.jsonl: the same results
    out = tmp_path / "batched"
    assert main(["--no-progress", "run", "--out", str(out), "--stage", "report"]) == 0
    reported = json.loads((out / "results.json").read_text())
    del reported["created"]
    assert reported == whole


def test_a_rerun_reads_no_frame_of_an_answered_sample(
    qa_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The labels of a sample's frames decide its request key (runner/keys.py), so a rerun
    knows an answered sample without reading or decoding any of its images."""
    task = get_task("4dbench-qa")
    sample = task.load(qa_release).items[0]
    cache = FrameCache(tmp_path / "cache")
    prepared = Preparation(task, cache, True, "plan").new_request(sample, ())
    assert not isinstance(prepared, str) and prepared.record["frames"]
    key = prepared.request.key
    assert Preparation(task, cache, True, "plan").answered_by_labels(sample, {key})
    assert not Preparation(task, cache, True, "other plan").answered_by_labels(sample, {key})

    first = _run(qa_release, tmp_path / "res", tmp_path / "cache")

    def no_frames(*args: object) -> None:
        raise AssertionError("an answered sample's frames were read")

    monkeypatch.setattr(frames_module, "_encoded_frames", no_frames)
    assert _run(qa_release, tmp_path / "res", tmp_path / "cache") == first
