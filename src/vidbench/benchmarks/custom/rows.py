"""The rows of a declared benchmark: every record of its rows files (records.py reads each file
record by record) as a plain dict, with its id and where it is, and a Problem for each bad one.

A row's fields are the record's, plus the `set` fields of its [[rows]] entry, `_file` (its file's
name without the suffix) and, in a JSON object of records, `_key` (the record's key). With
`explode = "questions"` a record holding a list of question records is one row per element: the
element's fields, then the record's other fields (an element's field wins a clash; the record is
`_parent`), and `_index` (the element's place in the list, from 0).

A row's id is the field (or the `{field}` template) `id` names; else the key of a JSON object of
records; else the record's own `id` when every record of the file has one; else `<file>-<n>` (n
counting records from 1); an exploded row's default id is its record's, then `-<n>` (n from 1).
Gold answers kept in a file of their own (`answers`) are joined to the rows by id; then people's
review decisions (`decisions`, decisions.py) drop rows and change gold answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import paths
from vidbench.benchmarks.custom.decisions import (
    RowDecision,
    decisions_path,
    fixed_answer,
    read_decisions,
)
from vidbench.benchmarks.custom.records import Record, plain, read_records
from vidbench.benchmarks.custom.spec import (
    FILE_FIELD,
    INDEX_FIELD,
    KEY_FIELD,
    PARENT_FIELD,
    AnswersFile,
    RowSource,
    Spec,
)
from vidbench.core.errors import DataError
from vidbench.tasks.problems import Loaded, Problem


@dataclass(frozen=True)
class DeclaredRow:
    id: str
    fields: dict[str, Any]
    where: str  # "line 3", "record 2", "key 'q1'", "key 'v1', question 2"
    file: Path
    source: RowSource


def source_files(source: RowSource, data: Path) -> list[Path]:
    """The files a [[rows]] entry names under the data folder (its glob's matches, sorted)."""
    path = Path(source.path)
    if not any(c in source.path for c in "*?["):
        return [path if path.is_absolute() else data / path]
    if path.is_absolute():
        return sorted(Path(path.anchor).glob(str(path.relative_to(path.anchor))))
    return sorted(data.glob(source.path))


def _record_shape(value: Any) -> str:
    """What a record that is not an object of fields is, and the key that reads it."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return (
            f"not a record but a list of {len(value)} records; vidbench reads a list of "
            "records, an object of records keyed by id, or an object holding a list of "
            'records (explode = "FIELD")'
        )
    return f"not a record (an object of fields): {value!r}"[:300]


def _id_of(fields: Mapping[str, Any], spec: Spec) -> str | None:
    assert spec.id is not None
    if "{" in spec.id:
        return paths.render(spec.id, fields, f"the id template {spec.id!r}")
    value = paths.lookup(fields, spec.id)
    if value is paths.MISSING or value is None or isinstance(value, dict | list):
        return None
    return str(value)


def _elements(record: Record, spec: Spec) -> Iterator[tuple[str, dict[str, Any]] | str]:
    """(where, fields) of each row a record makes, or why one cannot be made."""
    base = plain(record.value)
    if record.key is not None:
        base[KEY_FIELD] = record.key
    if spec.explode is None:
        yield record.where, base
        return
    items = paths.lookup(base, spec.explode)
    if not isinstance(items, list):
        part = paths.missing_part(base, spec.explode)
        what = "is missing" if items is paths.MISSING else f"holds {items!r}"[:200]
        yield f"{part} {what}, not a list of records (explode = {spec.explode!r})"
        return
    parent = {k: v for k, v in base.items() if k != spec.explode}
    for index, item in enumerate(items):
        where = f"{record.where}, {spec.explode}[{index}]"
        if not isinstance(item, dict):
            yield f"{where}: not a record (an object of fields): {item!r}"[:300]
            continue
        yield where, {**parent, **item, INDEX_FIELD: index, PARENT_FIELD: parent}


def _rows_of(file: Path, source: RowSource, spec: Spec) -> Iterator[DeclaredRow | Problem]:
    found = list(read_records(file))
    records = [r for r in found if isinstance(r, Record)]
    yield from (p for p in found if isinstance(p, Problem))
    whole = {r.key: r.value for r in records if r.key is not None}  # a JSON object's records
    if (
        spec.explode is not None
        and len(records) > 1
        and len(whole) == len(records)
        and paths.lookup(whole, spec.explode) is not paths.MISSING
    ):  # an object holding the list itself: the whole object is one record
        records = [Record("the file's object", whole)]
    own_ids = spec.id is None and all("id" in r.value for r in records if isinstance(r.value, dict))
    for n, record in enumerate(records, start=1):
        if not isinstance(record.value, dict):
            yield Problem(record.where, file, _record_shape(record.value))
            continue
        default = record.key or (str(record.value["id"]) if own_ids else f"{file.stem}-{n}")
        for made in _elements(record, spec):
            if isinstance(made, str):
                yield Problem(record.where, file, made)
                continue
            where, values = made
            fields = {**values, **source.set, FILE_FIELD: file.stem}
            if spec.id is None:
                index = fields.get(INDEX_FIELD)
                row_id: str | None = default if index is None else f"{default}-{index + 1}"
            else:
                try:
                    row_id = _id_of(fields, spec)
                except DataError as e:
                    yield Problem(where, file, f"no id: {e}")
                    continue
            if row_id is None or row_id.strip() == "":
                name = spec.id or "id"
                hint = paths.where_it_is(fields, name) if paths.plain_name(name) else ""
                part = paths.missing_part(fields, name)
                yield Problem(where, file, f"no id: {part} is missing or empty{hint}")
                continue
            yield DeclaredRow(row_id, fields, where, file, source)


def _answers(answers: AnswersFile, spec: Spec, data: Path) -> tuple[dict[str, Any], Path, list]:
    """Answer (or record) by row id from the answers file, and the problems reading it."""
    path = Path(answers.path) if Path(answers.path).is_absolute() else data / answers.path
    if not path.is_file():
        return {}, path, [Problem("", path, f"no answers file here (answers = {answers.path!r})")]
    found: dict[str, Any] = {}
    problems: list[Problem] = []
    for record in read_records(path):
        if isinstance(record, Problem):
            problems.append(record)
            continue
        value = plain(record.value)
        if answers.key is not None:
            key = paths.lookup(value, answers.key) if isinstance(value, dict) else paths.MISSING
            if key is paths.MISSING or key in (None, ""):
                part = f"the field {answers.key!r}"
                problems.append(Problem(record.where, path, f"no row id: {part} is missing"))
                continue
        elif record.key is not None:
            key = record.key
        else:
            problems.append(
                Problem(
                    record.where,
                    path,
                    "answers given as rows need the field that holds "
                    'each row\'s id: answers = { file = ..., key = "FIELD" }',
                )
            )
            continue
        found[str(key)] = value
    return found, path, problems


def _with_answer(fields: dict[str, Any], given: Any, spec: Spec) -> dict[str, Any]:
    assert spec.answer is not None
    if isinstance(given, dict):
        merged = {**given, **fields}  # the row's own fields win, but not its answer
        value = paths.lookup(given, spec.answer)
        if value is not paths.MISSING:
            merged[spec.answer] = value
        return merged
    return {**fields, spec.answer: given}


def _duplicate(found: DeclaredRow, earlier: DeclaredRow, spec: Spec) -> Problem:
    hint = ""
    if spec.id is not None and "{" not in spec.id:
        fields = [name for t in found.source.video for name in paths.fields_of(t)]
        other = fields[0] if fields else "video"
        hint = (
            f" (if {spec.id!r} is unique only within a video, make ids of several fields: "
            f'id = "{{{other}}}_{{{spec.id}}}")'
        )
    return Problem(
        found.id,
        found.file,
        f"{found.where}: duplicate id (first at {earlier.file.name} {earlier.where}); this row "
        f"skipped{hint}",
    )


def _apply_decisions(
    rows: Sequence[DeclaredRow], decided: Mapping[str, RowDecision], spec: Spec, path: Path
) -> tuple[list[DeclaredRow], list[Problem]]:
    """The rows with the decisions applied: dropped rows left out, fixed
    golds in the answer field; a decision that cannot apply is a problem and the row stays as
    its file has it."""
    out: list[DeclaredRow] = []
    problems: list[Problem] = []
    for row in rows:
        decision = decided.get(row.id)
        if decision is not None and decision.dropped:
            continue
        if decision is None or decision.answer is None:
            out.append(row)
        else:
            try:
                answer = fixed_answer(row.fields, spec, decision)
            except DataError as e:
                why = f"{decision.where}: the fix is not applied ({e})"
                problems.append(Problem(row.id, path, why))
                out.append(row)
                continue
            assert spec.answer is not None  # fixed_answer refuses a benchmark without one
            fields = {**row.fields, spec.answer: answer}  # a path is found as a name first
            out.append(DeclaredRow(row.id, fields, row.where, row.file, row.source))
    unknown = sorted(set(decided) - {row.id for row in rows})
    for key in unknown:
        problems.append(Problem(key, path, f"{decided[key].where}: a decision on an id no row has"))
    return out, problems


def read_rows(spec: Spec, data: Path) -> Loaded[DeclaredRow]:
    """Every row of every rows file (answers joined, review decisions applied), and a Problem
    for each file or record that cannot be read (a missing file, malformed JSON, a line of the
    wrong width, a repeated id, an answer or a decision for no row)."""
    rows: list[DeclaredRow] = []
    problems: list[Problem] = []
    first: dict[str, DeclaredRow] = {}
    for source in spec.sources:
        files = source_files(source, data)
        if not files or not files[0].is_file():
            where = files[0] if files else data / source.path
            problems.append(Problem("", where, f"no rows file here (rows = {source.path!r})"))
            continue
        for file in files:
            for found in _rows_of(file, source, spec):
                if isinstance(found, Problem):
                    problems.append(found)
                elif found.id in first:
                    problems.append(_duplicate(found, first[found.id], spec))
                else:
                    first[found.id] = found
                    rows.append(found)
    if spec.answers is not None:
        rows, unread = _join_answers(rows, set(first), spec, data)
        problems += unread
    decisions = decisions_path(spec, data)
    if decisions is not None:
        decided, unread = read_decisions(decisions)
        rows, undone = _apply_decisions(rows, decided, spec, decisions)
        problems += unread + undone
    return Loaded(rows, problems)


def _join_answers(
    rows: list[DeclaredRow], ids: set[str], spec: Spec, data: Path
) -> tuple[list[DeclaredRow], list[Problem]]:
    """The rows with the answers file's answers joined, and its problems."""
    assert spec.answers is not None
    answers, path, unread = _answers(spec.answers, spec, data)
    joined = [
        DeclaredRow(r.id, _with_answer(r.fields, answers[r.id], spec), r.where, r.file, r.source)
        if r.id in answers
        else r
        for r in rows
    ]
    unknown = sorted(set(answers) - ids)
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        unread.append(
            Problem(
                "",
                path,
                f"{len(unknown)} answer(s) for ids no row has ({shown}); the "
                "answers are matched with the rows' ids (the `id` key)",
            )
        )
    return joined, unread
