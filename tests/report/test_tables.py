"""The tables people already get: rows say what sets them apart, long names wrap instead of
being cut, runs of other tasks or data get their own table, and --runs totals are consistent."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from vidbench.cli import main
from vidbench.report.combine import combine, groups
from vidbench.report.runs import aggregate
from vidbench.report.schema import Results
from vidbench.report.tables import print_table, row_labels, rows, to_latex, to_markdown


def _document(model: str, task: str = "mmworld", data: str = "/d", **extra) -> dict:
    return {
        "task": task,
        "model": model,
        "protocol": "official",
        "data": data,
        "frame_spec": {"views": [0], "frames": 8, "sampler": "linspace"},
        "columns": {"Average": 50.0},
        "n": 10,
        "errors": 0,
        "unparsed": 2,
        **extra,
    }


def _result(model: str, task: str = "mmworld", data: str = "/d", **extra) -> Results:
    return Results.model_validate(_document(model, task, data, **extra))


def test_rows_name_what_differs_beside_the_model() -> None:
    plain = _result("gpt-4o")
    shuffled = _result("gpt-4o", task="mmworld:shuffled",
                       frame_spec={"views": [0], "frames": 8, "sampler": "linspace",
                                   "shuffle_seed": 0})  # fmt: skip
    reduced = _result("gpt-4o", task="mmworld:reduced",
                      frame_spec={"views": [0], "frames": 2, "sampler": "linspace"})  # fmt: skip
    labels = row_labels([plain, shuffled, reduced])
    assert len(set(labels)) == 3
    assert labels[1] == "gpt-4o [mmworld:shuffled, frames=8, shuffle_seed=0]"
    assert "frames=2" in labels[2] and "frames=8" in labels[0]
    assert row_labels([plain, _result("qwen")]) == ["gpt-4o", "qwen"]  # nothing else differs
    # two runs of one model name that differ in nothing shown: told apart by their order
    assert row_labels([plain, _result("qwen"), _result("gpt-4o")]) == [
        "gpt-4o #1",
        "qwen",
        "gpt-4o #2",
    ]


def test_long_model_names_wrap_instead_of_being_cut() -> None:
    name = "openai-compat:http://127.0.0.1:8000/v1#qwen2-vl-72b-instruct-awq"
    buffer = io.StringIO()
    print_table([_result(name)], "t", Console(file=buffer, width=60))
    text = "".join(buffer.getvalue().split())  # the wrapped name, joined
    assert "…" not in buffer.getvalue() and "qwen2-vl-72b-instruct-awq" in text.replace("│", "")


def test_runs_of_other_tasks_or_data_get_a_table_each(tmp_path: Path) -> None:
    paths = []
    for i, result in enumerate([_document("a"), _document("b", data="/other"), _document("c")]):
        path = tmp_path / f"r{i}.json"
        path.write_text(json.dumps(result))
        paths.append(path)
    buffer = io.StringIO()
    combine(paths, tmp_path / "out", Console(file=buffer, width=150))
    assert "mmworld — /d" in buffer.getvalue() and "mmworld — /other" in buffer.getvalue()
    tables = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert tables == ["table-1-mmworld", "table-2-mmworld"]
    assert "| a |" in (tmp_path / "out" / "table-1-mmworld" / "table.md").read_text()


def test_runs_summary_totals_are_consistent() -> None:
    runs = [_result("m", seed=s, errors=1) for s in range(3)]
    combined = aggregate(runs, ["r1", "r2", "r3"])
    assert (combined.n, combined.errors, combined.unparsed) == (30, 3, 6)
    assert [r.n for r in combined.per_run or []] == [10, 10, 10]
    row = "| m (3 runs) (incomplete: 3 of 30 not scored) | 50.0 ± 0.0 | 30 | 3 | 6 |"
    assert row in to_markdown([combined])


def test_an_incomplete_run_is_marked_never_bold_and_the_command_exits_3(
    tmp_path: Path, capsys
) -> None:
    """A run that exited 3 (8 of 14 samples not scored) has the best Average over the 6 it
    scored: its row says it is incomplete, is never bold, and `report` exits 3 naming it."""
    complete = _document("complete", columns={"Average": 35.7}, n=14)
    partial = _document("flaky", columns={"Average": 66.7}, n=14, errors=8)
    paths = []
    for name, document in (("complete", complete), ("flaky", partial)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(document))
        paths.append(str(tmp_path / name))
    out = tmp_path / "out"
    assert main(["report", *paths, "--out", str(out)]) == 3
    assert f"{tmp_path / 'flaky'}: incomplete: 8 of 14 not scored" in capsys.readouterr().err
    markdown = (out / "table.md").read_text()
    assert "| flaky (incomplete: 8 of 14 not scored) | 66.7 | 14 | 8 | 2 |" in markdown
    latex = (out / "table.tex").read_text()
    assert r"complete & \textbf{35.7}" in latex and r"\textbf{66.7}" not in latex
    assert main(["report", paths[0]]) == 0


def test_cells_that_would_break_a_table_are_escaped() -> None:
    """A pipe in a model or column name ends a Markdown cell, a line break the row; in LaTeX
    `|`, `<`, `>` print as other glyphs; a NaN column is never the best."""
    odd = _result("cat|dog\nv2 <x>", columns={"A|B": float("nan"), "C": 10.0})
    plain = _result("plain", columns={"A|B": 20.0, "C": 30.0})
    lines = to_markdown([odd, plain]).splitlines()
    assert lines[0] == r"| Model | A\|B | C | n | errors | unparsed |"
    assert lines[2] == r"| cat\|dog v2 <x> | nan | 10.0 | 10 | 0 | 2 |"
    latex = to_latex([odd, plain])
    assert r"cat\textbar{}dog" in latex and r"\textless{}x\textgreater{}" in latex
    assert r"plain & \textbf{20.0} & \textbf{30.0}" in latex


def test_chance_rows_that_differ_name_their_runs() -> None:
    """Two runs whose random-choice expectations differ (other samples scored) each get their
    chance row, saying whose it is."""
    a = _result("a", chance={"Average": 25.0})
    b = _result("b", chance={"Average": 27.5})
    c = _result("c", chance={"Average": 25.0})
    _, body = rows([a, b, c])
    assert [row[:2] for row in body[:2]] == [
        ["random-choice (expected) [of a, c]", "25.0"],
        ["random-choice (expected) [of b]", "27.5"],
    ]
    assert rows([a, c])[1][0][0] == "random-choice (expected)"


def test_report_never_writes_its_table_over_a_runs_own(tmp_path: Path, capsys) -> None:
    """`--out` naming one of the runs: its table.md (that run's row) was replaced by the
    table of all the runs, without a word."""
    paths = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(_document(name)))
        (tmp_path / name / "table.md").write_text("the run's own table\n")
        paths.append(str(tmp_path / name))
    assert main(["report", *paths, "--out", paths[0]]) == 2
    assert "is a run's results directory" in capsys.readouterr().err
    assert (tmp_path / "a" / "table.md").read_text() == "the run's own table\n"
    assert main(["report", paths[0], "--out", paths[0]]) == 0  # its own table, written again
    assert "| a |" in (tmp_path / "a" / "table.md").read_text()


def test_a_part_only_some_runs_have_is_shown() -> None:
    """MMWorld's difficulty columns exist only for runs that scored rated samples: given after
    a run without them, they were left out of the Markdown and LaTeX tables."""
    table = {"Table 3": ["Average"]}
    plain = _result("plain", column_groups=table)
    rated = _result("rated", columns={"Average": 50.0, "Easy": 70.0},
                    column_groups={**table, "Difficulty": ["Easy"]})  # fmt: skip
    markdown = to_markdown([plain, rated])
    assert "### Difficulty" in markdown and "| rated | 70.0 | 10 | 0 | 2 |" in markdown
    assert "| plain | — | 10 | 0 | 2 |" in markdown
    assert r"\textbf{70.0}" in to_latex([plain, rated])


def test_a_folder_of_runs_stands_for_the_runs_in_it(tmp_path: Path, capsys) -> None:
    """`vidbench report results/` (a sweep's output, the demo's results/), as `view` takes it;
    a path that is not there is named as such."""
    for name in ("a", "b"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(_document(name)))
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 0
    assert "| a |" in (tmp_path / "out" / "table.md").read_text()
    assert "| b |" in (tmp_path / "out" / "table.md").read_text()
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "nothing: no such results directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["report", "RUN"],
        ["figures", "RUN"],
        ["compare", "RUN", "RUN"],
        ["analyze", "errors", "RUN", "--judge", "constant:x"],
    ],
)
def test_an_out_that_is_a_file_is_named_before_any_work(
    tmp_path: Path, capsys, command: list[str]
) -> None:
    """--out naming a file: a FileExistsError traceback (analyze errors: after every judge
    call); now one line, exit 2."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(_document("a")))
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    args = [str(tmp_path / "run") if word == "RUN" else word for word in command]
    assert main(["--no-progress", *args, "--out", str(taken)]) == 2
    assert f"--out {taken}: cannot be made a folder (a file is in the way)" in (
        capsys.readouterr().err
    )
    assert taken.read_text() == "{}"


def test_repeated_runs_with_a_column_only_some_have_are_averaged() -> None:
    """`--runs 3` where one seed scored no rated sample (no difficulty column): the summary
    stopped with "runs of different tasks or columns cannot be averaged"."""
    table = {"Table 3": ["Average"]}
    rated = {**table, "Difficulty": ["Easy"]}
    runs = [
        _result("m", seed=0, columns={"Average": 50.0, "Easy": 60.0}, column_groups=rated),
        _result("m", seed=1, columns={"Average": 40.0}, column_groups=table, errors=2),
        _result("m", seed=2, columns={"Average": 60.0, "Easy": 80.0}, column_groups=rated),
    ]
    combined = aggregate(runs, ["r1", "r2", "r3"])
    assert combined.columns == {"Average": 50.0, "Easy": 70.0}  # Easy: of the two that have it
    assert combined.column_groups == rated and combined.errors == 2
    assert "### Difficulty" in to_markdown([combined])


def test_runs_are_grouped_by_the_data_folder_not_its_spelling(
    tmp_path: Path, qa_release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same data given as `data` from its parent and by its full path: two tables (and a
    relative name meaning other data from another folder: one table, without a word)."""
    monkeypatch.chdir(qa_release.parent)
    outs = []
    for data, name in ((qa_release.name, "relative"), (str(qa_release), "absolute")):
        args = ["--no-progress", "run", "4dbench-qa", "--data", data, "--model", "random"]
        assert main([*args, "--out", str(tmp_path / name)]) == 0
        outs.append(str(tmp_path / name))
        stored = json.loads((tmp_path / name / "results.json").read_text())
        assert stored["data"] == str(qa_release.resolve())
    assert main(["report", *outs, "--out", str(tmp_path / "table")]) == 0
    assert (tmp_path / "table" / "table.md").is_file()  # one table: not table-1-..., table-2-...


def test_a_label_with_brackets_prints_as_text() -> None:
    """Rows told apart by their data get "[/data/b]" in their label: rich read it as a closing
    markup tag (MarkupError traceback); a model named "[bold]x" lost its brackets."""
    buffer = io.StringIO()
    rows_ = [_result("[bold]m"), _result("m", data="/data/b")]
    print_table(rows_, "t [/x]", Console(file=buffer, width=150))
    printed = buffer.getvalue()
    assert "[bold]m [/d]" in printed and "m [/data/b]" in printed and "t [/x]" in printed


def test_a_relative_data_folder_of_an_older_results_file_is_grouped_with_its_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    older, newer = _result("a", data="mm"), _result("b", data=str(tmp_path / "mm"))
    assert len(groups([older, newer])) == 1 and row_labels([older, newer]) == ["a", "b"]


def test_an_out_folder_with_brackets_is_named_as_it_is(tmp_path: Path, capsys) -> None:
    """`figures --out 'figs[/x]'` wrote its files, then died of a rich MarkupError saying so."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(_document("a")))
    out = tmp_path / "figs[/x]"
    assert main(["figures", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert f"{out}/bars-1.png" in capsys.readouterr().err.replace("\n", "")


def test_a_run_given_twice_is_one_row(tmp_path: Path, capsys) -> None:
    """`vidbench report runs/ runs/a`: run a was two rows, "a #1" and "a #2", like two seeds."""
    (tmp_path / "runs" / "a").mkdir(parents=True)
    (tmp_path / "runs" / "a" / "results.json").write_text(json.dumps(_document("a")))
    out = tmp_path / "out"
    args = [str(tmp_path / "runs"), str(tmp_path / "runs" / "a" / "results.json")]
    assert main(["report", *args, "--out", str(out)]) == 0
    assert "given twice, shown once" in capsys.readouterr().err
    assert "| a |" in (out / "table.md").read_text() and "#2" not in (out / "table.md").read_text()
