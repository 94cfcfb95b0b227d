"""`vidbench demo`: data generated when absent, baselines evaluated, table printed and written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vidbench.cli import main
from vidbench.registry import get_task


@pytest.mark.slow
def test_demo_end_to_end(tmp_path: Path, capsys) -> None:
    out = tmp_path / "demo"
    assert main(["--no-progress", "demo", "--out", str(out), "--objects", "4"]) == 0
    printed = capsys.readouterr().out
    assert all(column in printed for column in get_task("4dbench-qa").table.columns)
    assert "random" in printed and "constant:A" in printed
    assert (out / "data" / "4D_Object_Question_Answering" / "data" / "4d_qa.json").is_file()
    table = (out / "results" / "table.md").read_text().splitlines()
    assert table[0].startswith("| Model | Object Counting |") and len(table) == 4
    for name in ("random", "constant-A"):
        results = json.loads((out / "results" / name / "results.json").read_text())
        assert results["n"] == 20 and results["errors"] == 0 and results["unparsed"] == 0
    # gold letters are balanced per subtask: always answering A scores 25 in every column
    assert set(results["columns"].values()) == {25.0}
    assert f"report: {out / 'report' / 'index.html'}" in " ".join(printed.split())
    meta = (out / "report" / "data" / "meta.js").read_text()
    assert '"total":20' in meta and len(list((out / "report" / "thumbs").iterdir())) > 0

    data_mtime = (out / "data" / "4D_Object_Question_Answering" / "data" / "4d_qa.json").stat()
    assert main(["--no-progress", "demo", "--out", str(out), "--objects", "4"]) == 0
    assert "0 answered, 20 reused" in capsys.readouterr().err  # nothing asked twice
    again = (out / "data" / "4D_Object_Question_Answering" / "data" / "4d_qa.json").stat()
    assert again.st_mtime_ns == data_mtime.st_mtime_ns  # the dataset is not regenerated
