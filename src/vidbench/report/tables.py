"""Paper-style tables from one or more results.json: terminal, Markdown, CSV and LaTeX. The
numbers are kept unrounded in results.json; here they are shown as the papers print them (one
decimal, `CELL_DIGITS`)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from rich.console import Console
from rich.table import Table

from vidbench.console import out, roomy
from vidbench.report.schema import Results

CELL_DIGITS = 1  # decimals of a table cell
# decimals of a 95% interval: percent columns, and columns of another scale (e.g. 0..5)
INTERVAL_DIGITS = {100.0: 2}
OTHER_SCALE_DIGITS = 3


def _columns(results: Sequence[Results]) -> list[str]:
    names: list[str] = []
    for r in results:
        names.extend(c for c in r.columns if c not in names)
    return names


def shown(value: float, digits: int = CELL_DIGITS) -> str:
    """A number as a table shows it."""
    return f"{value:.{digits}f}"


def interval(ci: Sequence[float], scale: float | None) -> str:
    """A 95% interval as the report shows it, e.g. "[45.12, 60.3]" (2 decimals for percent
    columns, 3 for others; `scale` None: as it is, from files that kept it rounded)."""
    if scale is None:
        return f"[{ci[0]:g}, {ci[1]:g}]"
    digits = INTERVAL_DIGITS.get(scale, OTHER_SCALE_DIGITS)
    return f"[{round(ci[0], digits):g}, {round(ci[1], digits):g}]"


def _cell(value: float | None, std: float | None = None) -> str:
    if value is None:
        return "—"
    return shown(value) if std is None else f"{shown(value)} ± {shown(std)}"


def _groups(results: Sequence[Results]) -> list[tuple[str, list[str]]]:
    """The paper's tables a result splits its columns into (`column_groups`, e.g. MMWorld's
    Table 3 / Table 4 / flags), else one table of all columns."""
    for r in results:
        if r.column_groups:
            return [(title, list(cols)) for title, cols in r.column_groups.items()]
    return [("", _columns(results))]


def table_parts(results: Sequence[Results]) -> list[tuple[str, list[str]]]:
    """(title, columns) of each part of the paper's table (public for `vidbench view`)."""
    return _groups(results)


def _chance_rows(results: Sequence[Results], columns: list[str]) -> list[list[str]]:
    """A "random-choice (expected)" row per distinct `chance` (the exact expected accuracy of
    the random-choice baseline, which MMWorld reports from its data), as the paper's first row."""
    seen: list[dict[str, float | None]] = []
    for r in results:
        if r.chance and r.chance not in seen:
            seen.append(r.chance)
    label = "random-choice (expected)"
    return [[label, *(_cell(c.get(k)) for k in columns), "", "", ""] for c in seen]


def _differences(results: Sequence[Results]) -> list[list[str]]:
    """Per result, what sets it apart from the others beside its model: the task variant, the
    protocol, the FrameSpec fields that differ, the data (none when all share them)."""
    notes: list[list[str]] = [[] for _ in results]
    for key in ("task", "protocol", "data"):
        values = [str(getattr(r, key)) for r in results]
        if len(set(values)) > 1:
            for note, value in zip(notes, values, strict=True):
                note.append(value if key != "protocol" else f"protocol {value}")
    specs = [r.frame_spec or {} for r in results]
    for field in sorted({k for spec in specs for k in spec}):
        settings = [spec.get(field) for spec in specs]
        if len({repr(v) for v in settings}) > 1:
            for note, setting in zip(notes, settings, strict=True):
                note.append(f"{field}={setting}")
    return notes


def row_labels(results: Sequence[Results], number_repeats: bool = True) -> list[str]:
    """Row names that tell the rows apart: the model, then what else differs (shuffled or
    reduced frames, another protocol, ...), then the number of runs averaged; rows that differ
    in none of these are numbered (#1, #2) unless `number_repeats` is False (the caller tells
    them apart itself, e.g. by folder)."""
    labels = []
    for r, note in zip(results, _differences(results), strict=True):
        label = str(r.model) + (f" [{', '.join(note)}]" if note else "")
        labels.append(label + (f" ({r.runs} runs)" if r.runs else ""))
    if not number_repeats:
        return labels
    # runs that differ in nothing shown (one model name, two folders): numbered in their order
    repeats = Counter(labels)
    seen: Counter[str] = Counter()
    numbered = []
    for label in labels:
        seen[label] += 1
        numbered.append(f"{label} #{seen[label]}" if repeats[label] > 1 else label)
    return numbered


def rows(
    results: Sequence[Results], columns: list[str] | None = None
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per result (model), the columns of the task's paper table;
    "mean ± std" cells for results of several runs (`std`)."""
    columns = _columns(results) if columns is None else columns
    header = ["Model", *columns, "n", "errors", "unparsed"]
    body = _chance_rows(results, columns) + [
        [
            label,
            *(_cell(r.columns.get(c), (r.std or {}).get(c)) for c in columns),
            str(r.n),
            str(r.errors),
            str(r.unparsed),
        ]
        for r, label in zip(results, row_labels(results), strict=True)
    ]
    return header, body


def to_markdown(results: Sequence[Results]) -> str:
    parts = []
    for title, columns in _groups(results):
        header, body = rows(results, columns)
        lines = [f"### {title}", ""] if title else []
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def to_csv(results: Sequence[Results]) -> str:
    header, body = rows(results)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()


# LaTeX's special characters, escaped so model names and columns print as text
_LATEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "\\": r"\textbackslash{}"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _number(cell: str) -> float | None:
    try:
        return float(cell.split(" ± ")[0])
    except ValueError:
        return None


def latex_table(header: Sequence[str], body: Sequence[Sequence[str]], bold: Sequence[int]) -> str:
    """A booktabs tabular; in the columns `bold` (indices), the best (highest) number is bold,
    as the papers print their tables."""
    best = {}
    for index in bold:
        values = [v for row in body if (v := _number(row[index])) is not None]
        if values:
            best[index] = max(values)
    lines = [
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in header) + r" \\",
        r"\midrule",
    ]
    for row in body:
        cells = []
        for i, cell in enumerate(row):
            text = latex_escape(cell).replace(" ± ", r" $\pm$ ")
            if i in best and _number(cell) == best[i]:
                text = r"\textbf{" + text + "}"
            cells.append(text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_latex(results: Sequence[Results]) -> str:
    """One booktabs table per part of the paper's table, best model per column in bold."""
    parts = []
    for title, columns in _groups(results):
        header, body = rows(results, columns)
        models = [r for r in body if r[0] != "random-choice (expected)"]
        table = latex_table(header, models, range(1, 1 + len(columns)))
        parts.append((f"% {title}\n" if title else "") + table)
    return "\n".join(parts)


def print_table(results: Sequence[Results], title: str, console: Console | None = None) -> None:
    console = roomy(console or out)  # logs and pipes: room for the whole table
    for group, columns in _groups(results):
        header, body = rows(results, columns)
        table = Table(title=f"{title} — {group}" if group else title)
        for i, name in enumerate(header):
            widest_word = max(len(word) for word in name.split())
            justify: Literal["left", "right"] = "left" if i == 0 else "right"
            # a cell too long for its column wraps (fold): never cut to "openai-compat:http…"
            table.add_column(name, justify=justify, min_width=widest_word, overflow="fold")
        for row in body:
            table.add_row(*row)
        console.print(table)
