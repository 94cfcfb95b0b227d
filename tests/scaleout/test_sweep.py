"""`vidbench sweep`: a grid of tasks x variants x models, one results directory per run and the
combined tables; a sweep file gives the same grid; rerunning asks nothing again."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TESTS
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.runner.run_config import RunConfig
from vidbench.runner.sweep import Sweep, load_sweep, run_configs, slug

MODELS = ("random", "constant:A")
SRC = TESTS.parent / "src"


def _runs(out: Path) -> dict[str, dict]:
    return {
        str(p.parent.relative_to(out)): json.loads(p.read_text())
        for p in sorted(out.glob("*/*/results.json"))
    }


@pytest.mark.slow
def test_the_grid_and_its_tables(qa_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    argv = [
        "--no-progress", "sweep", "--tasks", "4dbench-qa", "--variants", "time-first,views-2",
        "--models", ",".join(MODELS), "--data", str(qa_release), "--out", str(out),
        "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    assert main(argv) == 0
    runs = _runs(out)
    assert sorted(runs) == [
        "4dbench-qa-time-first/constant-A",
        "4dbench-qa-time-first/random",
        "4dbench-qa-views-2/constant-A",
        "4dbench-qa-views-2/random",
    ]
    for name, results in runs.items():
        assert results["n"] == 20 and results["errors"] == 0
        assert results["model"] == ("random" if name.endswith("random") else "constant:A")
    assert runs["4dbench-qa-views-2/random"]["frame_spec"]["views"] == [0, 12]
    # constant:A is right on the questions whose gold answer is A: 5 of 20
    assert runs["4dbench-qa-time-first/constant-A"]["columns"]["Overall"] == 25.0
    table = (out / "table.md").read_text()
    assert sum(line.startswith("| ") for line in table.splitlines()) == 5  # header + 4 runs
    assert (out / "table.csv").is_file() and (out / "table.tex").is_file()
    meta = (out / "report" / "data" / "meta.js").read_text()  # the HTML report of the 4 runs
    report = json.loads(meta[meta.index("(") + 1 : meta.rindex(")")])
    assert report["total"] == 20 and len(report["runs"]) == 4
    # a rerun finds every answer in its run's store
    assert main(argv) == 0
    for path in out.glob("*/*/store.sqlite"):
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 20


def test_a_sweep_file_gives_the_same_grid(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(
        'tasks = ["4dbench-qa", "mmworld"]\nmodels = ["random"]\nout = "runs"\n'
        'variants = []\nconcurrency = 4\nray = "auto"\nray_workers = 8\nparallel = 3\n'
        '[data]\n"4dbench-qa" = "/data/4d"\nmmworld = "/data/mmworld"\n'
        '[model_options."random"]\n'
    )
    base = RunConfig(task="", data="", model="", out="", seed=3)
    sweep = load_sweep(path, base)
    configs = run_configs(sweep)
    assert [(c.task, c.data, c.out) for c in configs] == [
        ("4dbench-qa", "/data/4d", "runs/4dbench-qa/random"),
        ("mmworld", "/data/mmworld", "runs/mmworld/random"),
    ]
    assert all(c.seed == 3 and c.concurrency == 4 and c.ray == "auto" for c in configs)
    assert configs[0].ray_workers == 8 and sweep.parallel == 3


def test_bad_sweeps_stop_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('tasks = ["4dbench-qa"]\nmodels = ["random"]\nout = "x"\ndata = "d"\nfoo = 1\n')
    with pytest.raises(ConfigError, match="unknown keys"):
        load_sweep(path, RunConfig(task="", data="", model="", out=""))
    sweep = Sweep(tasks=("mmworld",), models=("random",), out="x", data={"4dbench-qa": "d"})
    with pytest.raises(ConfigError, match="no data folder for mmworld"):
        run_configs(sweep)
    assert (
        slug("openai-compat:http://127.0.0.1:8000/v1#m") == "openai-compat-http-127.0.0.1-8000-v1-m"
    )


@pytest.mark.slow
def test_a_sweep_on_a_ray_cluster_it_starts(qa_release: Path, tmp_path: Path) -> None:
    """`--ray` with no address: a Ray instance of its own for the sweep, stopped after it; two
    runs at once, each its own driver of the same session."""
    pytest.importorskip("ray")
    out = tmp_path / "sweep"
    command = [
        sys.executable, "-m", "vidbench.cli", "--no-progress", "sweep",
        "--tasks", "4dbench-qa:time-first", "--models", "random,constant:B",
        "--data", str(qa_release), "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
        "--limit", "10", "--ray", "--ray-workers", "2", "--parallel", "2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(str(p.parent.relative_to(out)) for p in out.glob("*/*/results.json")) == [
        "4dbench-qa-time-first/constant-B",
        "4dbench-qa-time-first/random",
    ]
    for run_dir in (p.parent for p in out.glob("*/*/results.json")):
        with sqlite3.connect(run_dir / "store.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 10
    table = (out / "table.md").read_text()
    assert sum(line.startswith("| ") for line in table.splitlines()) == 3


def test_a_sweep_with_failed_calls_is_incomplete_and_says_what_to_do(
    fake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import make_qa_dataset
    from vidbench.testing import Reply

    server = fake(reply=lambda body: Reply(http_status=404, error="no such model"))
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    model = f"openai-compat:{server.base_url}#gone"
    argv = [
        "--no-progress", "sweep", "--tasks", "4dbench-qa", "--models", f"random,{model}",
        "--data", str(data), "--out", str(tmp_path / "sweep"), "--no-report",
        "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 3  # was 0: a sweep of runs without answers looked complete
    said = " ".join(capsys.readouterr().err.split())
    assert "change first the model name (or endpoint) (5)" in said
