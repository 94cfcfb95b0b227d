"""`vidbench compare`: paired tests on the samples both runs scored (exact McNemar checked against
an independent binomial computation, a seeded bootstrap), refusal of runs that do not pair, and
the LaTeX tables `report` and `compare` write."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from vidbench.analyze.compare import compare_runs
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.report.results_dir import ResultsDir
from vidbench.report.tables import latex_escape
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.scoring.stats import paired


def _run(data: Path, out: Path, model: str, seed: int = 0) -> Path:
    config = RunConfig("4dbench-qa", str(data), model, str(out), seed=seed, progress=False)
    Run(config).run()
    return out


def _binomial_two_sided(a_only: int, b_only: int) -> float:
    """The exact two-sided binomial test at 1/2, written out: the doubled smaller tail."""
    n, k = a_only + b_only, min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, qa_release: Path) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    return _run(qa_release, root / "random", "random", 1), _run(
        qa_release, root / "A", "constant:A"
    )


def test_mcnemar_equals_the_binomial_test_on_discordant_pairs(runs: tuple[Path, Path]) -> None:
    a, b = runs
    comparison = compare_runs(a, b, n_resamples=2000)
    assert comparison.paired_samples == 20 and comparison.only_a == comparison.only_b == 0
    right_a = {r.id: r.outcome.kind == "correct" for r in ResultsDir(a).read_samples()}
    right_b = {r.id: r.outcome.kind == "correct" for r in ResultsDir(b).read_samples()}
    a_only = sum(1 for i in right_a if right_a[i] and not right_b[i])
    b_only = sum(1 for i in right_a if right_b[i] and not right_a[i])
    overall = next(c for c in comparison.columns if c.column == "Overall")
    assert overall.result is not None and overall.result.test == "mcnemar-exact"
    assert overall.result.discordant == (a_only, b_only) and a_only + b_only > 0
    assert overall.result.p_value == pytest.approx(_binomial_two_sided(a_only, b_only))
    accuracy_a = sum(right_a.values()) / 20
    assert overall.result.mean_a == pytest.approx(accuracy_a)
    per_subtask = [c for c in comparison.columns if c.column != "Overall"]
    assert [c.result.n for c in per_subtask if c.result] == [4] * 5  # 4 objects per subtask


def test_the_paired_bootstrap_is_seeded() -> None:
    a = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4]
    b = [0.2, 0.6, 0.9, 0.5, 0.6, 0.4, 0.9, 0.4]
    first, again = paired(a, b, seed=3), paired(a, b, seed=3)
    assert first == again and first.test == "paired-bootstrap"
    assert paired(a, b, seed=4).p_value != first.p_value  # another seed, other resamples
    assert first.difference == pytest.approx(sum(b) / 8 - sum(a) / 8)
    assert first.ci95[0] < first.difference < first.ci95[1] and 0 < first.p_value <= 1


def test_runs_that_do_not_pair_are_refused(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = runs
    other = tmp_path / "other-data"
    shutil.copytree(b, other)
    config = json.loads((other / "run.json").read_text())
    results = json.loads((other / "results.json").read_text())
    # the same data, given by a name relative to the folder the run started in: they pair,
    # from whatever folder compare is started (run.json's name was read from here)
    (other / "run.json").write_text(json.dumps({**config, "data": Path(config["data"]).name}))
    monkeypatch.chdir(tmp_path)
    assert compare_runs(a, other, n_resamples=100).paired_samples == 20
    (other / "run.json").write_text(json.dumps({**config, "data": str(tmp_path)}))
    (other / "results.json").write_text(json.dumps({**results, "data": str(tmp_path)}))
    with pytest.raises(ConfigError, match="the same samples are needed"):
        compare_runs(a, other)
    (other / "run.json").write_text(json.dumps({**config, "task": "mmworld"}))
    with pytest.raises(ConfigError, match="do not pair"):
        compare_runs(a, other)
    # a --runs N folder (its mean): named as such (was "no run.json; run the infer stage")
    repeated = tmp_path / "repeated"
    shutil.copytree(b, repeated / "run-1")
    shutil.copy(b / "results.json", repeated / "results.json")
    with pytest.raises(ConfigError, match="holds the runs of a --runs N command"):
        compare_runs(a, repeated)


def test_compare_and_report_write_latex(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs
    assert (
        main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp"), "--resamples", "500"]) == 0
    )
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert (
        written["paired_samples"] == 20 and written["columns"]["Overall"]["test"] == "mcnemar-exact"
    )
    assert (tmp_path / "cmp" / "compare.tex").read_text().startswith("\\begin{tabular}")
    assert "20 samples scored in both runs" in capsys.readouterr().out
    tex = (a / "table.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "both")]) == 0
    both = (tmp_path / "both" / "table.tex").read_text()
    rows = [line for line in both.splitlines() if line.startswith(("random", "constant"))]
    assert len(rows) == 2 and "\\textbf{" in both  # the best per column in bold
    assert latex_escape("gpt-4o_mini & 100%") == "gpt-4o\\_mini \\& 100\\%"
