"""A declared benchmark's rows stream: `iter_load` hands out each row's sample (or problem) as
its file is read, in file order, holding a bounded number of rows; repeated ids are found without
a dict of every row (rows.iter_rows), the first row kept and each later one a problem naming it."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from custom_support import ISSUE_TOML, make_bench, write_rows
from vidbench.benchmarks.custom import records, rows
from vidbench.benchmarks.custom.loader import iter_load, load
from vidbench.benchmarks.custom.records import Record
from vidbench.benchmarks.custom.rows import DeclaredRow
from vidbench.benchmarks.custom.spec import read_spec
from vidbench.core import records as core_records
from vidbench.core.records import Sample
from vidbench.tasks.problems import Problem

ID_TOML = ISSUE_TOML + 'id = "id"\n'
HINT = (
    " (if 'id' is unique only within a video, make ids of several fields: id = \"{video_id}_{id}\")"
)


def _row(n: int, key: str, question: str = "") -> dict[str, Any]:
    return {
        "id": key,
        "video_id": f"clip{n % 3}",
        "question": question or f"What happens in row {n}?",
        "options": ["red", "blue", "green"],
        "answer": "ABC"[n % 3],
        "domain": f"d{n % 4}",
    }


def _alive() -> dict[str, int]:
    """How many Samples, rows and records are alive in this process."""
    gc.collect()
    counts = dict.fromkeys(("Sample", "DeclaredRow", "Record"), 0)
    for o in gc.get_objects():
        if type(o) in (Sample, DeclaredRow, Record):
            counts[type(o).__name__] += 1
    return counts


def test_a_streamed_rows_file_keeps_the_first_of_a_repeated_id_and_holds_few_rows(
    tmp_path: Path,
) -> None:
    """3,000 rows, 30 of them repeating an earlier row's id (some of those earlier rows bad):
    the stream gives each id's first row at its place and a problem naming the first row for
    every later one, each bad row's problem at its place; while it streams only a few samples,
    rows and records are alive, so the rows are not listed first."""
    table = []
    for n in range(3000):
        key = f"q{n - 37}" if n % 100 == 50 else f"q{n}"  # a copy of a row 37 lines earlier
        question = " " if n % 331 == 13 or n == 63 else ""  # row 13 (q13) has a copy at 50 + 13
        table.append(_row(n, key, question))
    folder = make_bench(tmp_path, ID_TOML, table)
    path = folder / "questions.jsonl"
    expected: list[tuple[str, str] | str] = []
    first_line: dict[str, int] = {}
    for line, row in enumerate(table, start=1):
        key = row["id"]
        if key in first_line:
            expected.append(
                f"{key}: line {line}: duplicate id (first at questions.jsonl line "
                f"{first_line[key]}); this row skipped{HINT} [{path}]"
            )
            continue
        first_line[key] = line
        if row["question"].strip():
            expected.append((key, row["question"]))
        else:
            expected.append(
                f"{key}: line {line}: no question: the field 'question' is missing or empty "
                f"[{path}]"
            )
    copies = [e for e in expected if isinstance(e, str) and "duplicate" in e]
    assert len(copies) == 30 and any("first at questions.jsonl line 14)" in c for c in copies)

    spec = read_spec(folder)
    before = _alive()  # other tests' objects may still be alive in this process
    most = dict.fromkeys(before, 0)
    streamed: list[tuple[str, str] | str] = []
    for n, item in enumerate(iter_load(spec, folder)):
        if isinstance(item, Sample):
            assert item.question is not None
            streamed.append((item.id, item.question))
        else:
            streamed.append(str(item))
        if n % 500 == 0:
            now = _alive()
            most = {name: max(most[name], now[name] - before[name]) for name in most}
    assert streamed == expected  # file order, problems in their rows' places
    assert most["Sample"] <= 1 and most["DeclaredRow"] <= 2 and most["Record"] <= 2, most

    loaded = load(spec, folder)
    assert [(s.id, s.question) for s in loaded.items] == [
        e for e in expected if isinstance(e, tuple)
    ]
    assert [str(p) for p in loaded.problems] == [e for e in expected if isinstance(e, str)]


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize(("suffix", "header"), [(".jsonl", 0), (".csv", 1)])
def test_a_repeated_id_across_two_files_of_one_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, header: int, collide: bool
) -> None:
    """A glob's two files repeat ids (across them and within one): the first file's row is
    kept, each later one is a problem naming it, in CSV as in JSON Lines. With every id's hash
    alike (`collide`) the ids are told apart all the same."""
    if collide:  # four hash values for all ids: most pairs of different ids collide
        monkeypatch.setattr(core_records, "key_hash", lambda key: len(key) % 4)
        monkeypatch.setattr(rows, "key_hash", lambda key: len(key) % 4)
    toml = ID_TOML.replace('rows = "questions.jsonl"', f'rows = "parts/*{suffix}"')
    folder = make_bench(tmp_path, toml, [_row(0, "a")], "unused.jsonl")
    write_rows(folder / "parts" / f"one{suffix}", [_row(0, "a"), _row(1, "b"), _row(2, "c")])
    write_rows(folder / "parts" / f"two{suffix}", [_row(3, "b"), _row(4, "d"), _row(5, "d")])
    loaded = load(read_spec(folder), folder)
    assert [(s.id, s.answer) for s in loaded.items] == [
        ("a", "A"),
        ("b", "B"),
        ("c", "C"),
        ("d", "B"),
    ]
    two = folder / "parts" / f"two{suffix}"
    assert [str(p) for p in loaded.problems] == [
        f"b: line {1 + header}: duplicate id (first at one{suffix} line {2 + header}); this row "
        f"skipped{HINT} [{two}]",
        f"d: line {3 + header}: duplicate id (first at two{suffix} line {2 + header}); this row "
        f"skipped{HINT} [{two}]",
    ]


def test_parquet_rows_are_read_batch_by_batch_and_counted_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "_PARQUET_BATCH", 2)
    table = [_row(n, f"q{n}", " " if n == 4 else "") for n in range(5)]
    folder = make_bench(
        tmp_path,
        ID_TOML.replace("questions.jsonl", "questions.parquet"),
        table,
        "questions.parquet",
    )
    loaded = load(read_spec(folder), folder)
    assert [s.id for s in loaded.items] == ["q0", "q1", "q2", "q3"]
    assert [str(p) for p in loaded.problems] == [
        "q4: row 5: no question: the field 'question' is missing or empty "
        f"[{folder / 'questions.parquet'}]"
    ]


def test_the_answers_and_decisions_problems_come_after_the_rows(tmp_path: Path) -> None:
    """The answers file's and the decisions file's problems follow the rows' (each in its
    file's order): they are known once every row has been read."""
    toml = ID_TOML.replace(
        'answer = "answer"', 'answer = "answer"\nanswers = { file = "gold.jsonl", key = "id" }'
    )
    toml += 'decisions = "decisions.jsonl"\n'
    table = [{k: v for k, v in _row(n, f"q{n}").items() if k != "answer"} for n in range(3)]
    table[1]["question"] = ""
    folder = make_bench(tmp_path, toml, table)
    write_rows(folder / "gold.jsonl", [{"id": "q0", "answer": "B"}, {"id": "zz", "answer": "A"}])
    write_rows(
        folder / "decisions.jsonl",
        [{"id": "q2", "decision": "drop"}, {"id": "gone", "decision": "drop"}],
    )
    items = list(iter_load(read_spec(folder), folder))
    shown = [(i.id, i.answer) if isinstance(i, Sample) else str(i).split(" [")[0] for i in items]
    assert shown == [
        ("q0", "B"),
        "q1: line 2: no question: the field 'question' is missing or empty",
        "1 answer(s) for ids no row has ('zz'); the answers are matched with the rows' ids "
        "(the `id` key)",
        "gone: line 2: a decision on an id no row has",
    ]
    assert all(isinstance(i, Problem) for i in items[1:])


def test_a_jsonl_escape_that_is_no_text_loses_its_row_and_other_escapes_load(
    tmp_path: Path,
) -> None:
    """A JSON Lines line is looked through for text that is not UTF-8 only when it could hold
    some (a "\\u" escape or a byte kept as a surrogate): "\\ud800" is a problem, "\\u00e9" loads."""
    folder = make_bench(tmp_path, ID_TOML, [_row(n, f"q{n}") for n in range(3)])
    path = folder / "questions.jsonl"
    text = path.read_text().replace("row 1?", "row \\ud800?").replace("row 2?", "row \\u00e9?")
    path.write_text(text)
    loaded = load(read_spec(folder), folder)
    assert [(s.id, s.question) for s in loaded.items] == [
        ("q0", "What happens in row 0?"),
        ("q2", "What happens in row \u00e9?"),
    ]
    assert [str(p) for p in loaded.problems] == [
        "line 2: not UTF-8 text in the field 'question' (an unpaired surrogate escape); this row "
        f"skipped [{path}]"
    ]


def test_files_without_an_id_key_are_read_twice_as_files_with_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no `id` key, a file whose every record has an `id` takes those ids, and one where
    a record lacks it numbers its rows; a repeated id is found across files all the same, and
    an empty own id is a problem, not a repeat. Each file is read twice, as with an `id` key."""
    readings: Counter[str] = Counter()  # records read, by file
    real = rows.read_records

    def counted(path: Path) -> Iterator[Record | Problem]:
        for record in real(path):
            readings[path.name] += 1
            yield record

    monkeypatch.setattr(rows, "read_records", counted)
    toml = ISSUE_TOML.replace('rows = "questions.jsonl"', 'rows = "parts/*.jsonl"')
    folder = make_bench(tmp_path, toml, [_row(0, "a")], "unused.jsonl")
    parts = {  # file -> the rows' own ids (None: the record has no `id`)
        "one": ["a", "b", "c"],
        "three": ["c", "", "d", "c"],  # own ids: c repeats one's, then its own
        "two": ["x", None, "y"],  # numbered: two-1, two-2, two-3
    }
    for name, ids in parts.items():
        table = [_row(n, key or "") for n, key in enumerate(ids)]
        for row, key in zip(table, ids, strict=True):
            if key is None:
                del row["id"]
        write_rows(folder / "parts" / f"{name}.jsonl", table)

    loaded = load(read_spec(folder), folder)
    assert [s.id for s in loaded.items] == ["a", "b", "c", "d", "two-1", "two-2", "two-3"]
    three = folder / "parts" / "three.jsonl"
    assert [str(p).split(" (")[0] for p in loaded.problems] == [
        "c: line 1: duplicate id",
        "line 2: no id: the field 'id' is missing or empty",
        "c: line 4: duplicate id",
    ]
    assert "(first at one.jsonl line 3); this row skipped" in str(loaded.problems[0])
    assert str(loaded.problems[1]).endswith(f"[{three}]")
    assert readings == {"one.jsonl": 6, "three.jsonl": 8, "two.jsonl": 6}
