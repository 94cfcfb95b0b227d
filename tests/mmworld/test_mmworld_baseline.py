"""random-choice (shuffle the options, always pick "a"): its mean over many seeds converges to
the expected accuracy the task computes from the data, column by column."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mmworld_support import make_mmworld
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.requests import Request
from vidbench.models.registry import ModelOptions, load_model
from vidbench.registry import get_task

SEEDS = 4000


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mmworld(tmp_path_factory.mktemp("mmworld_baseline"))


def test_mean_over_seeds_converges_to_the_expectation(dataset: Path) -> None:
    task = get_task("mmworld:rule")
    samples = task.load(dataset).items
    requests = [Request(f"k{s.id}", s.id, (), choices=task.choices(s)) for s in samples]

    async def answers(seed: int) -> list:
        return await load_model("random-choice", ModelOptions(seed=seed)).generate(requests)

    async def every_seed() -> list:
        return [await answers(seed) for seed in range(SEEDS)]

    per_seed = [
        [task.score(s, r.text, {}) for s, r in zip(samples, replies, strict=True)]
        for replies in asyncio.run(every_seed())
    ]
    expected = task.extra_results(per_seed[0])["chance"]
    assert expected["Science"] == pytest.approx(100 * (1 / 4 + 1 / 3) / 2, abs=0.01)
    # over all seeds: mean accuracy per column (standard errors: Average ~0.2, a column ~0.5)
    pooled = task.column_values([record for records in per_seed for record in records])
    for column, values in pooled.items():
        if values:
            assert 100 * sum(values) / len(values) == pytest.approx(expected[column], abs=2.0)
    average = pooled["Average"]
    assert 100 * sum(average) / len(average) == pytest.approx(expected["Average"], abs=0.8)
    # every option is picked equally often (the shuffle puts each option first with 1/k)
    three = next(i for i, s in enumerate(samples) if len(s.metadata["labels"]) == 3)
    picks = [scores[three].parsed for scores in per_seed]
    assert {label: picks.count(label) / SEEDS for label in "abc"} == pytest.approx(
        {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, abs=0.03
    )


def test_a_run_picks_what_the_model_picks(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    args = ["--data", str(dataset), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    assert (
        main(
            [
                "--no-progress",
                "run",
                "mmworld:rule",
                "--model",
                "random-choice",
                "--seed",
                "5",
                *args,
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    model = load_model("random-choice", ModelOptions(seed=5))
    task = get_task("mmworld:rule")
    by_id = {s.id: s for s in task.load(dataset).items}
    for record in records:
        request = Request("k", record["id"], (), choices=task.choices(by_id[record["id"]]))
        [reply] = asyncio.run(model.generate([request]))
        assert record["raw_output"] == reply.text and record["parsed"] == reply.text
    with pytest.raises(ConfigError, match="takes no argument"):
        load_model("random-choice:x")
