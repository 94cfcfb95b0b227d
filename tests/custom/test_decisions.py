"""People's review decisions on a declared benchmark's rows (`decisions = FILE`,
benchmark.toml; the audit queue's export writes it): a fix changes the gold, written as the row
writes its own answer; a drop takes the row out; a keep leaves it and records the flags it was
kept with; bad lines are problems naming the file and the line, and the rest apply."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from custom_support import ISSUE_TOML, ROWS, make_bench
from vidbench.annotate.adapters import Decision
from vidbench.benchmarks.custom.decisions import answer_as_written
from vidbench.benchmarks.custom.loader import load
from vidbench.benchmarks.custom.review import write_decisions
from vidbench.benchmarks.custom.spec import read_spec
from vidbench.core.errors import ConfigError, DataError
from vidbench.registry import get_task

TOML = ISSUE_TOML + 'id = "n"\ndecisions = "decisions.jsonl"\n'
ROWS_N = [{"n": f"q{i}", **row} for i, row in enumerate(ROWS)]  # golds A B C D A B


def _bench(tmp_path: Path, decisions: list[Any] | str, toml: str = TOML, rows: Any = None) -> Path:
    folder = make_bench(tmp_path / "bench", toml, rows or ROWS_N)
    text = (
        decisions
        if isinstance(decisions, str)
        else "".join(json.dumps(d) + "\n" for d in decisions)
    )
    (folder / "decisions.jsonl").write_text(text)
    return folder


def _loaded(folder: Path) -> tuple[dict[str, str | None], list[str]]:
    result = load(read_spec(folder), folder)
    return {s.id: s.answer for s in result.items}, [str(p) for p in result.problems]


def test_fix_drop_and_keep_are_applied(tmp_path: Path) -> None:
    folder = _bench(
        tmp_path,
        [
            {"id": "q0", "decision": "fix", "answer": "C", "was": "A", "flags": ["gold"]},
            {"id": "q1", "decision": "drop", "reason": "two options fit"},
            {"id": "q2", "decision": "keep", "flags": ["easy", "blind"]},
        ],
    )
    golds, problems = _loaded(folder)
    assert problems == []
    assert golds == {"q0": "C", "q2": "C", "q3": "D", "q4": "A", "q5": "B"}
    # the audit reads which rows were kept, and with which flags, from the task
    assert get_task(f"custom:{folder}").reviewed(folder) == {"q2": frozenset({"easy", "blind"})}


def test_the_lines_on_one_row_apply_in_order_one_review_round_after_another(
    tmp_path: Path,
) -> None:
    folder = _bench(
        tmp_path,
        [
            # fixed, then kept with the flag the fixed item got: the fix stays
            {"id": "q0", "decision": "fix", "answer": "C", "flags": ["gold"]},
            {"id": "q0", "decision": "keep", "flags": ["easy"]},
            # kept, then fixed: another item now, its kept flags are cleared
            {"id": "q1", "decision": "keep", "flags": ["chance"]},
            {"id": "q1", "decision": "fix", "answer": "D", "flags": ["gold"]},
            # dropped, then kept: back as it was, with the gold of its earlier fix
            {"id": "q2", "decision": "fix", "answer": "A"},
            {"id": "q2", "decision": "drop", "reason": "unclear"},
            {"id": "q2", "decision": "keep", "flags": ["blind"]},
            # kept, then dropped: out
            {"id": "q3", "decision": "keep", "flags": ["easy"]},
            {"id": "q3", "decision": "drop", "reason": "answered without the video"},
        ],
    )
    golds, problems = _loaded(folder)
    assert problems == []
    assert golds == {"q0": "C", "q1": "D", "q2": "A", "q4": "A", "q5": "B"}
    reviewed = get_task(f"custom:{folder}").reviewed(folder)
    assert reviewed == {"q0": frozenset({"easy"}), "q2": frozenset({"blind"})}


def test_bad_decisions_are_named_and_the_rest_apply(tmp_path: Path) -> None:
    lines = [
        {"id": "q0", "decision": "fix", "answer": "B"},
        {"id": "q1", "decision": "maybe"},
        {"id": "q2", "decision": "fix"},
        {"id": "nope", "decision": "drop"},
        {"id": "q3", "decision": "fix", "answer": "E"},
        {"id": "q4", "decision": "keep", "flags": "easy"},
    ]
    text = "".join(json.dumps(d) + "\n" for d in lines) + '{"id": "q5",\n'
    folder = _bench(tmp_path, text)
    path = folder / "decisions.jsonl"
    golds, problems = _loaded(folder)
    assert golds == {"q0": "B", "q1": "B", "q2": "C", "q3": "D", "q4": "A", "q5": "B"}
    assert sorted(problems) == sorted(
        [
            f"line 2: q1: 'decision' must be one of keep, fix, drop, got 'maybe' [{path}]",
            f"line 3: q2: a fix needs 'answer', the new gold answer, got None [{path}]",
            f"nope: line 4: a decision on an id no row has [{path}]",
            "q3: line 5: the fix is not applied (answer 'E' is not a letter A-D, an index 0-3 "
            f"(index_base = 0) or the text of one option (answer_format = 'auto')) [{path}]",
            f"line 6: q4: 'flags' must be a list of flag kinds, got 'easy' [{path}]",
            f"line 7: malformed JSON: Expecting property name enclosed in double quotes [{path}]",
        ]
    )


def test_a_named_file_that_is_missing_is_a_problem_and_the_rows_load(tmp_path: Path) -> None:
    folder = _bench(tmp_path, [])
    (folder / "decisions.jsonl").unlink()
    golds, problems = _loaded(folder)
    assert len(golds) == 6
    assert problems == [f"no decisions file here (decisions = ...) [{folder / 'decisions.jsonl'}]"]


def test_the_decisions_file_is_jsonl(tmp_path: Path) -> None:
    folder = _bench(tmp_path, [], toml=TOML.replace("decisions.jsonl", "decisions.json"))
    with pytest.raises(ConfigError, match=r"review decisions are a \.jsonl file"):
        read_spec(folder)


def test_a_fix_on_an_open_ended_benchmark_is_a_problem(tmp_path: Path) -> None:
    toml = (
        'name = "open"\nrows = "questions.jsonl"\nid = "n"\nvideo = "videos/{video_id}.mp4"\n'
        'question = "question"\nkind = "open-ended"\nanswer = "answer"\n'
        'decisions = "decisions.jsonl"\n'
    )
    rows = [{"n": "q0", "video_id": "clip0", "question": "What?", "answer": "a cat"}]
    folder = _bench(tmp_path, [{"id": "q0", "decision": "fix", "answer": "B"}], toml, rows)
    result = load(read_spec(folder), folder)
    assert [s.id for s in result.items] == ["q0"]
    assert "a fix changes a multiple-choice gold; this benchmark is open-ended" in str(
        result.problems[0]
    )


@pytest.mark.parametrize(
    ("answer", "extra", "letter", "written"),
    [
        ("A", "", "C", "C"),  # a letter
        (0, 'answer_format = "index"\n', "C", 2),  # an index, a number as the row's
        ("1", 'answer_format = "index"\nindex_base = 1\n', "C", "3"),  # counted from 1, text
        ("event 0a", "", "D", "event 0d"),  # the option's text
    ],
)
def test_a_fixed_gold_is_written_as_the_row_writes_its_own(
    tmp_path: Path, answer: Any, extra: str, letter: str, written: Any
) -> None:
    rows = [{**ROWS_N[0], "answer": answer, "options": [f"event 0{c}" for c in "abcd"]}]
    folder = make_bench(tmp_path / "bench", ISSUE_TOML + 'id = "n"\n' + extra, rows)
    spec = read_spec(folder)
    assert answer_as_written(rows[0], spec, letter) == written
    with pytest.raises(DataError, match="'E' is not an option here"):
        answer_as_written(rows[0], spec, "E")
    # and read back: the decision applied gives that letter
    (folder / "decisions.jsonl").write_text(
        json.dumps({"id": "q0", "decision": "fix", "answer": written}) + "\n"
    )
    toml = folder / "benchmark.toml"
    toml.write_text(toml.read_text() + 'decisions = "decisions.jsonl"\n')
    assert _loaded(folder) == ({"q0": letter}, [])


def test_the_export_appends_each_round_and_a_later_keep_keeps_an_earlier_fix(
    tmp_path: Path,
) -> None:
    folder = make_bench(tmp_path / "bench", TOML, ROWS_N)
    exports = tmp_path / "exports"
    first = Decision("q3", "fix", "B", "", ("gold", "chance"), "rita", "2026-01-01T10:00Z")
    done = write_decisions(folder, [first], exports)
    assert (done.written, done.left_out) == (1, [])
    shutil.copy(done.path, folder / "decisions.jsonl")
    assert _loaded(folder)[0]["q3"] == "B"

    # round two: the fixed item is flagged easy now, and kept; q1 dropped
    second = [
        Decision("q3", "keep", None, "", ("easy",), "rob", "2026-01-02T10:00Z"),
        Decision("q1", "drop", None, "unclear", ("blind",), "rob", "2026-01-02T09:00Z"),
    ]
    done = write_decisions(folder, second, exports)
    lines = [json.loads(line) for line in done.path.read_text().splitlines()]
    assert [(r["id"], r["decision"]) for r in lines] == [
        ("q3", "fix"),
        ("q1", "drop"),  # in the order they were made
        ("q3", "keep"),
    ]
    assert lines[0]["answer"] == "B" and lines[2]["was"] == "D"  # the rows file's gold
    shutil.copy(done.path, folder / "decisions.jsonl")
    golds, problems = _loaded(folder)
    assert problems == [] and golds["q3"] == "B" and "q1" not in golds
    assert get_task(f"custom:{folder}").reviewed(folder) == {"q3": frozenset({"easy"})}
    # the same decisions exported again: the same file
    again = write_decisions(folder, second, exports)
    assert again.path.read_text() == (folder / "decisions.jsonl").read_text()
    assert again.then.startswith("the benchmark applies it once it is its decisions file: cp ")


def test_nothing_decided_is_not_advised_as_a_decisions_file(tmp_path: Path) -> None:
    folder = make_bench(tmp_path / "bench", ISSUE_TOML + 'id = "n"\n', ROWS_N)
    done = write_decisions(folder, [], tmp_path / "exports")
    assert done.written == 0 and done.path.read_text() == ""
    assert done.then == "no decision is submitted yet: nothing for the benchmark to apply"
