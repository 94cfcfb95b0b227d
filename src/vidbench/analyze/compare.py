"""`vidbench compare RUN_A RUN_B`: per column, B minus A on the samples both runs answered, with
a paired test (exact McNemar for right/wrong columns, paired bootstrap for scores).

Only samples scored in both runs count (how many is said per column). Runs of different tasks,
or of the same task on different data, are refused: their samples do not pair.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape

from vidbench.console import roomy
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_atomic, write_json
from vidbench.report.results_dir import RUN_FILE, ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.report.tables import data_of, latex_table, markdown_table, terminal_table
from vidbench.runner.run_config import RunConfig
from vidbench.scoring.stats import PairedResult, paired
from vidbench.tasks.base import Task
from vidbench.tasks.data import data_folder


@dataclass(frozen=True)
class ColumnComparison:
    column: str
    result: PairedResult | None  # None: no sample has a value for this column in both runs
    scale: float  # the table's scale: differences are reported in the column's unit


@dataclass(frozen=True)
class Comparison:
    a: str  # the runs' labels (model and task)
    b: str
    task: str
    paired_samples: int  # scored in both runs
    only_a: int
    only_b: int
    columns: list[ColumnComparison]

    def as_dict(self) -> dict[str, JsonValue]:
        plain = {f.name: getattr(self, f.name) for f in fields(self)}
        return plain | {"columns": {c.column: _row_dict(c) for c in self.columns}}


def _row_dict(c: ColumnComparison) -> dict[str, JsonValue] | None:
    if c.result is None:
        return None
    r = asdict(c.result)
    for key in ("mean_a", "mean_b", "difference"):
        r[key] = round(r[key] * c.scale, 4)
    r["ci95"] = [round(v * c.scale, 4) for v in c.result.ci95]
    return r


def _scored(directory: Path) -> dict[str, SampleRow]:
    """The run's scored rows by id (those results.json does not count among its errors)."""
    return {row.id: row for row in ResultsDir(directory).read_samples() if not row.failed}


def _label(directory: Path) -> str:
    results = ResultsDir(directory).read_results()
    return f"{results.model} · {results.task}"


def _data(directory: Path, task: Task, config: RunConfig) -> Path:
    """The data folder the run scored, as results.json says it (its full path: the same
    whatever folder the runs and this command were started from), else as run.json gives it."""
    results = ResultsDir(directory).read_results()
    return Path(data_of(results)) if results.data else data_folder(task, config.data).resolve()


def _config(directory: Path) -> RunConfig:
    """The run stored in `directory`; a `--runs N` folder (the mean of its runs) is named as
    such: its samples are its runs' (run-1, ...), one of which is compared."""
    runs = sorted(p.parent.name for p in directory.glob(f"run-*/{RUN_FILE}"))
    if not (directory / RUN_FILE).is_file() and runs:
        raise ConfigError(
            f"compare: {directory} holds the runs of a --runs N command ({', '.join(runs)}): "
            "compare one of them (their samples pair; the mean has none)"
        )
    return RunConfig.load(directory)


def compare_runs(a: Path, b: Path, n_resamples: int = 10_000, seed: int = 0) -> Comparison:
    config_a, config_b = _config(a), _config(b)
    base_a, base_b = config_a.task.partition(":")[0], config_b.task.partition(":")[0]
    if base_a != base_b:
        raise ConfigError(f"compare: {a} is a run of {base_a}, {b} one of {base_b}; their "
                          "samples do not pair")  # fmt: skip
    task = config_a.open_task()
    data_a, data_b = _data(a, task, config_a), _data(b, config_b.open_task(), config_b)
    if data_a != data_b:
        raise ConfigError(f"compare: {a} ran on {data_a}, {b} on {data_b}; the same samples "
                          "are needed")  # fmt: skip
    scored_a, scored_b = _scored(a), _scored(b)
    both = sorted(set(scored_a) & set(scored_b))
    columns = []
    shown = task.table.shown_columns(task.column_values([scored_a[i] for i in both]))
    for column in shown:  # the table's columns, and those its data has (group values)
        pairs = _pairs(task, column, [scored_a[i] for i in both], [scored_b[i] for i in both])
        result = paired(*pairs, n_resamples=n_resamples, seed=seed) if pairs[0] else None
        columns.append(ColumnComparison(column, result, task.table.scale_of(column)))
    return Comparison(
        _label(a),
        _label(b),
        config_a.task,
        len(both),
        len(set(scored_a) - set(scored_b)),
        len(set(scored_b) - set(scored_a)),
        columns,
    )


def _pairs(
    task: Task, column: str, a: Sequence[SampleRow], b: Sequence[SampleRow]
) -> tuple[list[float], list[float]]:
    """The per-sample values of one column in both runs, for samples with a value in both
    (a sample's value: what the task's column_values takes from its record alone)."""
    xs, ys = [], []
    for row_a, row_b in zip(a, b, strict=True):
        va = task.column_values([row_a]).get(column, [])
        vb = task.column_values([row_b]).get(column, [])
        if len(va) == 1 and len(vb) == 1:
            xs.append(float(va[0]))
            ys.append(float(vb[0]))
    return xs, ys


HEADER = ["Column", "n", "A", "B", "B − A", "95% CI", "p", "test"]


def table_rows(comparison: Comparison) -> list[list[str]]:
    rows = []
    for c in comparison.columns:
        if c.result is None:
            rows.append([c.column, "0", "—", "—", "—", "—", "—", "—"])
            continue
        r, s = c.result, c.scale
        rows.append(
            [
                c.column,
                str(r.n),
                f"{r.mean_a * s:.2f}",
                f"{r.mean_b * s:.2f}",
                f"{r.difference * s:+.2f}",
                f"[{r.ci95[0] * s:+.2f}, {r.ci95[1] * s:+.2f}]",
                f"{r.p_value:.3g}",
                r.test,
            ]
        )
    return rows


def to_markdown(comparison: Comparison) -> str:
    lines = [f"A: {comparison.a}  ", f"B: {comparison.b}  ", _pairing_note(comparison), ""]
    lines += markdown_table(HEADER, table_rows(comparison))
    return "\n".join(lines) + "\n"


def to_csv(comparison: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerows(table_rows(comparison))
    return out.getvalue()


def _pairing_note(comparison: Comparison) -> str:
    return (
        f"{comparison.paired_samples} samples scored in both runs "
        f"({comparison.only_a} only in A, {comparison.only_b} only in B are left out)"
    )


def to_latex(comparison: Comparison) -> str:
    return latex_table(HEADER, table_rows(comparison), bold=())


def write_comparison(comparison: Comparison, out: Path) -> list[Path]:
    """compare.md, compare.csv, compare.json and compare.tex in `out`."""
    files = {
        "compare.md": to_markdown(comparison),
        "compare.csv": to_csv(comparison),
        "compare.tex": to_latex(comparison),
    }
    for name, text in files.items():
        write_atomic(out / name, text.encode())
    write_json(out / "compare.json", comparison.as_dict())
    return [out / name for name in (*files, "compare.json")]


def print_comparison(comparison: Comparison, console: Console) -> None:
    console = roomy(console)  # logs and pipes: room for the whole table
    table = terminal_table(
        f"B − A: {comparison.task}",
        HEADER,
        table_rows(comparison),
        left=(0, len(HEADER) - 1),
        caption=_pairing_note(comparison),
    )
    console.print(f"A: {escape(comparison.a)}\nB: {escape(comparison.b)}", highlight=False)
    console.print(table)
