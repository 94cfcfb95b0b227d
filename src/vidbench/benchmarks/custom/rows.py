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

from array import array
from collections.abc import Iterable, Iterator, Mapping
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
from vidbench.core.records import key_hash, repeated_among
from vidbench.tasks.problems import Problem


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
    base = dict(record.value)  # records.py gives plain values: a copy, to add `_key` to
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


def _records_of(file: Path, spec: Spec) -> Iterable[Record | Problem]:
    """The file's records in file order (records.py reads them one at a time); a JSON object
    holding the list that `explode` names is one record, the whole object."""
    found = read_records(file)
    if spec.explode is None or file.suffix.lower() != ".json":
        return found
    held = list(found)  # a JSON document: records.py has read it whole already
    records = [r for r in held if isinstance(r, Record)]
    whole = {r.key: r.value for r in records if r.key is not None}  # a JSON object's records
    if (
        len(records) > 1
        and len(whole) == len(records)
        and paths.lookup(whole, spec.explode) is not paths.MISSING
    ):  # an object holding the list itself: the whole object is one record
        return [*(p for p in held if isinstance(p, Problem)), Record("the file's object", whole)]
    return held


def _records_with_fields(file: Path, spec: Spec) -> Iterator[tuple[Record, int] | Problem]:
    """The file's records that are objects of fields, each with its number (from 1, counting
    every record read), and the problems of the others, in file order."""
    n = 0
    for record in _records_of(file, spec):
        if isinstance(record, Problem):
            yield record
            continue
        n += 1
        if not isinstance(record.value, dict):
            yield Problem(record.where, file, _record_shape(record.value))
            continue
        yield record, n


def _default_id(record: Record, n: int, file: Path, own_ids: bool) -> str:
    """What a record's rows' ids start from when the spec names no `id`."""
    return record.key or (str(record.value["id"]) if own_ids else f"{file.stem}-{n}")


def _default_row_id(default: str, fields: Mapping[str, Any]) -> str:
    """A row's id when the spec names no `id`: an exploded row's adds its place in the list."""
    index = fields.get(INDEX_FIELD)
    return default if index is None else f"{default}-{index + 1}"


def _row_fields(values: dict[str, Any], source: RowSource, file: Path) -> dict[str, Any]:
    return {**values, **source.set, FILE_FIELD: file.stem}


def _rows_of(
    file: Path, source: RowSource, spec: Spec, own_ids: bool
) -> Iterator[DeclaredRow | Problem]:
    """The rows of one file and the problems of its records, in file order; `own_ids`: the
    rows' default ids are their records' own `id`s (`_default_id_hashes` finds out)."""
    for found in _records_with_fields(file, spec):
        if isinstance(found, Problem):
            yield found
            continue
        record, n = found
        default = _default_id(record, n, file, own_ids)
        for made in _elements(record, spec):
            if isinstance(made, str):
                yield Problem(record.where, file, made)
                continue
            where, values = made
            fields = _row_fields(values, source, file)
            if spec.id is None:
                row_id: str | None = _default_row_id(default, fields)
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


def _default_id_hashes(file: Path, source: RowSource, spec: Spec) -> tuple[array[int], bool]:
    """The hashes (`key_hash`) of the ids of the file's rows when the spec names no `id`, and
    whether those are their records' own `id`s (every record of the file has one), in one
    reading of the file: both ids of each row are hashed until a record without an `id` is
    read (16 bytes a row of this file), then only the numbered ones."""
    numbered: array[int] = array("Q")
    own: array[int] | None = array("Q")  # None: some record has no `id`
    for found in _records_with_fields(file, spec):
        if isinstance(found, Problem):
            continue
        record, n = found
        if own is not None and "id" not in record.value:
            own = None
        variants = [(numbered, _default_id(record, n, file, False))]
        if own is not None:
            variants.append((own, _default_id(record, n, file, True)))
        for made in _elements(record, spec):
            if isinstance(made, str):
                continue
            fields = _row_fields(made[1], source, file)
            for hashes, default in variants:
                row_id = _default_row_id(default, fields)
                if row_id.strip():  # an empty id is a problem, not a row (`_rows_of`)
                    hashes.append(key_hash(row_id))
    return (numbered, False) if own is None else (own, True)


def _row_files(spec: Spec, data: Path) -> Iterator[tuple[RowSource, Path] | Problem]:
    """Each rows file of each [[rows]] entry, or a problem for an entry that names none."""
    for source in spec.sources:
        files = source_files(source, data)
        if not files or not files[0].is_file():
            where = files[0] if files else data / source.path
            yield Problem("", where, f"no rows file here (rows = {source.path!r})")
            continue
        for file in files:
            yield source, file


def _id_hashes(spec: Spec, data: Path, own_ids: dict[Path, bool]) -> Iterator[int]:
    """The hashes (`key_hash`) of every row's id, a first reading of the rows files; when the
    spec names no `id`, whether each file's rows take their records' own ids is kept in
    `own_ids`, for the second reading."""
    for found in _row_files(spec, data):
        if isinstance(found, Problem):
            continue
        source, file = found
        if spec.id is None:
            hashes, own_ids[file] = _default_id_hashes(file, source, spec)
            yield from hashes
        else:
            for row in _rows_of(file, source, spec, own_ids=False):
                if isinstance(row, DeclaredRow):
                    yield key_hash(row.id)


def _all_rows(spec: Spec, data: Path, own_ids: dict[Path, bool]) -> Iterator[DeclaredRow | Problem]:
    """Every row of every rows file, and the problems of their files and records, in file
    order, before ids are checked for repeats (`own_ids`: as `_id_hashes` found them)."""
    for found in _row_files(spec, data):
        if isinstance(found, Problem):
            yield found
            continue
        source, file = found
        yield from _rows_of(file, source, spec, own_ids.get(file, False))


def _answers(answers: AnswersFile, spec: Spec, data: Path) -> tuple[dict[str, Any], Path, list]:
    """Answer (or record) by row id from the answers file, and the problems reading it. It is
    held whole, as a dict: a separate file of answers (an id and an answer or a small record a
    row), usually far smaller than the rows, which are streamed past it."""
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


def _duplicate(found: DeclaredRow, earlier: tuple[Path, str], spec: Spec) -> Problem:
    hint = ""
    if spec.id is not None and "{" not in spec.id:
        fields = [name for t in found.source.video for name in paths.fields_of(t)]
        other = fields[0] if fields else "video"
        hint = (
            f" (if {spec.id!r} is unique only within a video, make ids of several fields: "
            f'id = "{{{other}}}_{{{spec.id}}}")'
        )
    file, where = earlier
    return Problem(
        found.id,
        found.file,
        f"{found.where}: duplicate id (first at {file.name} {where}); this row skipped{hint}",
    )


def _decided(
    row: DeclaredRow, decision: RowDecision, spec: Spec, path: Path
) -> tuple[DeclaredRow, Problem | None]:
    """The row with a kept or fixed decision applied (a fixed gold in the answer field); a fix
    that cannot apply is a problem and the row stays as its file has it."""
    if decision.answer is None:
        return row, None
    try:
        answer = fixed_answer(row.fields, spec, decision)
    except DataError as e:
        return row, Problem(row.id, path, f"{decision.where}: the fix is not applied ({e})")
    assert spec.answer is not None  # fixed_answer refuses a benchmark without one
    fields = {**row.fields, spec.answer: answer}  # a path is found as a name first
    return DeclaredRow(row.id, fields, row.where, row.file, row.source), None


def iter_rows(spec: Spec, data: Path) -> Iterator[DeclaredRow | Problem]:
    """Every row of every rows file (answers joined, review decisions applied), and a Problem
    for each file or record that cannot be read (a missing file, malformed JSON, a line of the
    wrong width, a repeated id, an answer or a decision for no row), one at a time.

    Rows and the problems of the rows files come in file order; then the answers file's
    problems, then the decisions file's. A repeated id keeps its first row and names it in the
    later rows' problems. What is held while the rows stream is one row, the answers and the
    decisions (each a dict of its file), and to find repeated ids 8 bytes a row
    (`repeated_among`, a first reading of the files; 16 while a file is read whose rows may
    take their records' own ids) plus where the rows whose id hash repeats were first found.
    Each file is read twice, whether the spec names the ids or not."""
    own_ids: dict[Path, bool] = {}
    repeated = repeated_among(_id_hashes(spec, data, own_ids))
    answers, answers_path, answer_problems = (
        _answers(spec.answers, spec, data) if spec.answers is not None else ({}, None, [])
    )
    decisions = decisions_path(spec, data)
    decided, decision_problems = read_decisions(decisions) if decisions is not None else ({}, [])
    first: dict[str, tuple[Path, str]] = {}  # where each id whose hash repeats was first
    answered: set[str] = set()  # the answers' ids that a row has
    reached: set[str] = set()  # the decisions' ids that a row has
    undone: list[Problem] = []  # fixes that cannot apply (at most one a decision)
    for found in _all_rows(spec, data, own_ids):
        if isinstance(found, Problem):
            yield found
            continue
        row = found
        if key_hash(row.id) in repeated:
            earlier = first.get(row.id)
            if earlier is not None:
                yield _duplicate(row, earlier, spec)
                continue
            first[row.id] = (row.file, row.where)
        if row.id in answers:
            answered.add(row.id)
            fields = _with_answer(row.fields, answers[row.id], spec)
            row = DeclaredRow(row.id, fields, row.where, row.file, row.source)
        decision = decided.get(row.id)
        if decision is not None:
            reached.add(row.id)
            if decision.dropped:
                continue
            assert decisions is not None  # a decision comes from the decisions file
            row, problem = _decided(row, decision, spec, decisions)
            if problem is not None:
                undone.append(problem)
        yield row
    yield from answer_problems
    unknown = sorted(set(answers) - answered)
    if unknown and answers_path is not None:
        shown = ", ".join(repr(u) for u in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        yield Problem(
            "",
            answers_path,
            f"{len(unknown)} answer(s) for ids no row has ({shown}); the "
            "answers are matched with the rows' ids (the `id` key)",
        )
    yield from decision_problems
    yield from undone
    for key in sorted(set(decided) - reached):
        assert decisions is not None
        yield Problem(key, decisions, f"{decided[key].where}: a decision on an id no row has")
