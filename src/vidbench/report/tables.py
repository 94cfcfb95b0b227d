"""Paper-style tables from one or more results.json: terminal, Markdown, CSV and LaTeX. The
numbers are kept unrounded in results.json; here they are shown as the papers print them (one
decimal, `CELL_DIGITS`)."""

from __future__ import annotations

import csv
import io
import math
import os
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

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


def merged_groups(results: Sequence[Results]) -> dict[str, list[str]]:
    """The `column_groups` of every result, in order: a part or column only some have
    (MMWorld's difficulty columns, of the runs that scored rated samples) is kept."""
    merged: dict[str, list[str]] = {}
    for r in results:
        for title, columns in (r.column_groups or {}).items():
            part = merged.setdefault(title, [])
            part += [c for c in columns if c not in part]
    return merged


def _groups(results: Sequence[Results]) -> list[tuple[str, list[str]]]:
    """The paper's tables the results split their columns into (`merged_groups`, e.g.
    MMWorld's Table 3 / Table 4 / flags), else one table of all columns."""
    return list(merged_groups(results).items()) or [("", _columns(results))]


def table_parts(results: Sequence[Results]) -> list[tuple[str, list[str]]]:
    """(title, columns) of each part of the paper's table (public for `vidbench view`)."""
    return _groups(results)


CHANCE_LABEL = "random-choice (expected)"


def _chance_rows(
    results: Sequence[Results], labels: Sequence[str], columns: list[str]
) -> list[list[str]]:
    """A "random-choice (expected)" row per distinct `chance` (the exact expected accuracy of
    the random-choice baseline, which MMWorld reports from the samples a run scored), as the
    paper's first row; when the rows' chances differ (other data, an incomplete run), each
    names the rows it is the chance of."""
    seen: dict[str, tuple[dict[str, float | None], list[str]]] = {}
    for r, label in zip(results, labels, strict=True):
        if r.chance:
            seen.setdefault(repr(sorted(r.chance.items())), (r.chance, []))[1].append(label)
    return [
        [
            CHANCE_LABEL + (f" [of {', '.join(of)}]" if len(seen) > 1 else ""),
            *(_cell(chance.get(k)) for k in columns),
            "",
            "",
            "",
        ]
        for chance, of in seen.values()
    ]


def data_of(result: Results) -> str:
    """The result's data folder as a full path (a results.json written before `data` was one:
    taken from here), "None" when it has none."""
    return os.path.abspath(result.data) if result.data else str(result.data)


def _differences(results: Sequence[Results]) -> list[list[str]]:
    """Per result, what sets it apart from the others beside its model: the task variant, the
    protocol, the FrameSpec fields that differ, the data (none when all share them)."""
    notes: list[list[str]] = [[] for _ in results]
    for key in ("task", "protocol", "data"):
        values = [data_of(r) if key == "data" else str(getattr(r, key)) for r in results]
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


STALE_NOTE = "stale: its data changed since it was scored"


def incomplete_note(result: Results) -> str:
    """What a row of an incomplete run says of it (its run exited 3: samples without an
    answer or a verdict, not scored), e.g. "incomplete: 8 of 14 not scored", or of a stale one
    (its data changed since it was scored: `Results.stale`, STALE_NOTE); "" when complete and
    current. Its columns are not over the data as it is, so it is never shown as if complete."""
    notes = [STALE_NOTE] if result.stale else []
    notes += [unscored_note(result)] if result.errors else []
    return "; ".join(notes)


def unscored_note(result: Results) -> str:
    """ "incomplete: 8 of 14 not scored": the samples of an incomplete run not scored."""
    return f"incomplete: {result.errors} of {result.n} not scored"


def row_labels(results: Sequence[Results], number_repeats: bool = True) -> list[str]:
    """Row names that tell the rows apart: the model, then what else differs (shuffled or
    reduced frames, another protocol, ...), then the number of runs averaged, then whether it
    is incomplete; rows that differ in none of these are numbered (#1, #2) unless
    `number_repeats` is False (the caller tells them apart itself, e.g. by folder)."""
    labels = []
    for r, note in zip(results, _differences(results), strict=True):
        label = str(r.model) + (f" [{', '.join(note)}]" if note else "")
        label += f" ({r.runs} runs)" if r.runs else ""
        labels.append(label + (f" ({gap})" if (gap := incomplete_note(r)) else ""))
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
    results: Sequence[Results],
    columns: list[str] | None = None,
    labels: Sequence[str] | None = None,
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per result (model), the columns of the task's paper table;
    "mean ± std" cells for results of several runs (`std`); each row named by `labels`
    (default: `row_labels`)."""
    columns = _columns(results) if columns is None else columns
    header = ["Model", *columns, "n", "errors", "unparsed"]
    labels = row_labels(results) if labels is None else labels
    body = _chance_rows(results, labels, columns) + [
        [
            label,
            *(_cell(r.columns.get(c), (r.std or {}).get(c)) for c in columns),
            str(r.n),
            str(r.errors),
            str(r.unparsed),
        ]
        for r, label in zip(results, labels, strict=True)
    ]
    return header, body


def _markdown_cell(text: str) -> str:
    """A cell's text as a Markdown table cell: a `|` escaped (it would end the cell), line
    breaks as spaces (they would end the row)."""
    return " ".join(text.replace("|", "\\|").split())


def markdown_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a Markdown table (GitHub's pipe tables), every cell escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_markdown_cell(c) for c in cells) + " |"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *map(line, body)]


def to_markdown(results: Sequence[Results]) -> str:
    parts = []
    for title, columns in _groups(results):
        header, body = rows(results, columns)
        lines = [f"### {_markdown_cell(title)}", ""] if title else []
        parts.append("\n".join(lines + markdown_table(header, body)) + "\n")
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
          "\\": r"\textbackslash{}", "|": r"\textbar{}", "<": r"\textless{}",
          ">": r"\textgreater{}"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _number(cell: str) -> float | None:
    """The number a cell shows (a "mean ± std" cell's mean); None for none, NaN or infinite."""
    try:
        value = float(cell.split(" ± ")[0])
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def latex_table(
    header: Sequence[str],
    body: Sequence[Sequence[str]],
    bold: Sequence[int],
    ranked: Sequence[bool] | None = None,
) -> str:
    """A booktabs tabular; in the columns `bold` (indices), the best (highest) number of the
    rows `ranked` marks (default: every row) is bold, as the papers print their tables."""
    contenders = [row for i, row in enumerate(body) if ranked is None or ranked[i]]
    best = {}
    for index in bold:
        values = [v for row in contenders if (v := _number(row[index])) is not None]
        if values:
            best[index] = max(values)
    lines = [
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in header) + r" \\",
        r"\midrule",
    ]
    for row_index, row in enumerate(body):
        cells = []
        for i, cell in enumerate(row):
            text = latex_escape(cell).replace(" ± ", r" $\pm$ ")
            in_race = ranked is None or ranked[row_index]
            if in_race and i in best and _number(cell) == best[i]:
                text = r"\textbf{" + text + "}"
            cells.append(text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_latex(results: Sequence[Results]) -> str:
    """One booktabs table per part of the paper's table, best model per column in bold (an
    incomplete run's row is never bold: its numbers are over part of the samples)."""
    complete = [not incomplete_note(r) for r in results]
    parts = []
    for title, columns in _groups(results):
        header, body = rows(results, columns)
        models = body[len(body) - len(results) :]  # the chance rows come first
        table = latex_table(header, models, range(1, 1 + len(columns)), complete)
        parts.append((f"% {title}\n" if title else "") + table)
    return "\n".join(parts)


def terminal_table(
    title: str,
    header: Sequence[str],
    body: Sequence[Sequence[str]],
    left: Sequence[int] = (0,),
    caption: str | None = None,
) -> Table:
    """A rich table of these rows (the columns `left` left-aligned, the others right): a cell
    too long for its column wraps (fold), never cut to "openai-compat:http…"; a header is never
    narrower than its widest word. Print it to `console.roomy(...)` (pipes and logs: wide)."""
    table = Table(title=Text(title), caption=Text(caption) if caption else None)
    for i, name in enumerate(header):
        widest_word = max((len(word) for word in name.split()), default=1)
        justify: Literal["left", "right"] = "left" if i in left else "right"
        table.add_column(Text(name), justify=justify, min_width=widest_word, overflow="fold")
    for row in body:  # as text: a "[/data]" in a label is no markup (it was a MarkupError)
        table.add_row(*map(Text, row))
    return table


def print_table(results: Sequence[Results], title: str, console: Console | None = None) -> None:
    console = roomy(console or out)  # logs and pipes: room for the whole table
    for group, columns in _groups(results):
        header, body = rows(results, columns)
        console.print(terminal_table(f"{title} — {group}" if group else title, header, body))
