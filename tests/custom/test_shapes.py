"""The shapes rows come in: text that is not UTF-8 (one row lost, named with its field, never
the file), field paths and id templates, nested question lists (`explode`), answers kept in a
file of their own, windows in one "start-end" field, list-valued and missing group values, and
shapes vidbench cannot read refused with the key that would read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_support import make_bench, results, samples, vidbench, write_rows
from vidbench.benchmarks.custom.loader import load
from vidbench.benchmarks.custom.spec import read_spec
from vidbench.core.records import Sample

BASE = """name = "shapes"
rows = "{rows}"
video = "videos/{{video}}.mp4"
"""
ROW = {"video": "clip0", "question": "Which?", "options": ["red", "blue"], "answer": "B"}


def loaded(folder: Path) -> tuple[dict[str, Sample], list[str]]:
    found = load(read_spec(folder), folder)
    return {s.id: s for s in found.items}, [str(p) for p in found.problems]


def bench(tmp_path: Path, rows: Any, rows_file: str = "questions.jsonl", extra: str = "") -> Path:
    folder = make_bench(tmp_path, BASE.format(rows=rows_file) + extra, [], "unused.jsonl")
    path = folder / rows_file
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    elif isinstance(rows, list):
        write_rows(path, rows)
    else:
        path.write_text(json.dumps(rows))
    return folder


# ------------------------------------------------------------------ text that is not UTF-8
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_a_byte_that_is_not_utf8_loses_only_its_row(tmp_path: Path, suffix: str) -> None:
    """One byte 0xff in the second row's question: that row is a problem naming the row and the
    field; the other rows load (the CSV lost every row, with a byte offset, before)."""
    rows = [{**ROW, "id": f"q{n}", "question": f"Which {n}?"} for n in range(3)]
    folder = bench(tmp_path, rows, f"questions{suffix}", 'id = "id"\n')
    path = folder / f"questions{suffix}"
    path.write_bytes(path.read_bytes().replace(b"Which 1?", b"Which \xff?"))
    found, problems = loaded(folder)
    assert sorted(found) == ["q0", "q2"]
    where = {".csv": "line 3", ".jsonl": "line 2", ".json": "record 2"}[suffix]
    assert problems == [
        f"{where}: not UTF-8 text in the field 'question' (byte 0xff); this row skipped [{path}]"
    ]


def test_parquet_text_that_is_not_utf8(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    questions = pa.array([b"Which 0?", b"Which \xff?"], pa.binary())
    text = pa.Array.from_buffers(pa.string(), 2, questions.buffers())  # no UTF-8 check
    table = pa.table(
        {
            "id": ["q0", "q1"],
            "video": ["clip0", "clip0"],
            "question": text,
            "options": [["red", "blue"]] * 2,
            "answer": ["B", "A"],
        }
    )
    folder = bench(tmp_path, [], "questions.parquet", 'id = "id"\n')
    pq.write_table(table, folder / "questions.parquet")
    found, problems = loaded(folder)
    assert list(found) == ["q0"] and "row 2: not UTF-8 text in the field 'question'" in problems[0]


# ------------------------------------------------------------------ paths, ids, explode
def test_field_paths_and_an_id_template(tmp_path: Path) -> None:
    """Question ids that repeat across videos, made unique by a template; nested fields; options
    as a list of records."""
    rows = [
        {
            "meta": {"video": f"clip{v}", "area": "Physics"},
            "qid": q,
            "q": f"Q{v}{q}?",
            "choices": [{"id": 0, "text": "red"}, {"id": 1, "text": "blue"}],
            "gold": q % 2,
        }
        for v in range(3)
        for q in range(2)
    ]
    toml = (
        'rows = "q.json"\nvideo = "videos/{meta.video}.mp4"\nid = "{meta.video}_{qid}"\n'
        'question = "q"\noptions = "choices[].text"\nanswer = "gold"\ngroups = ["meta.area"]\n'
    )
    folder = make_bench(tmp_path, 'name = "paths"\n' + toml, rows, "q.json")
    found, problems = loaded(folder)
    assert problems == [] and len(found) == 6  # not 2: the ids repeat only within a video
    sample = found["clip1_1"]
    assert sample.options == ("red", "blue") and sample.answer == "B"
    assert sample.media.videos == {0: folder / "videos" / "clip1.mp4"}

    (folder / "benchmark.toml").write_text(
        'name = "paths"\n' + toml.replace('id = "{meta.video}_{qid}"', 'id = "qid"')
    )
    found, problems = loaded(folder)
    assert len(found) == 2 and len(problems) == 4
    assert 'make ids of several fields: id = "{meta.video}_{qid}"' in problems[0]


def test_explode_a_keyed_object_of_question_lists(tmp_path: Path) -> None:
    """Perception Test's shape: {video id: {metadata, mc_question: [...]}}; one row per question,
    the record's fields and its key reachable."""
    data = {
        f"video_{v}": {
            "metadata": {"video_id": f"clip{v}", "split": "valid"},
            "mc_question": [
                {
                    "id": q,
                    "question": f"Q{q}?",
                    "options": ["a", "b", "c"],
                    "answer_id": q,
                    "area": "Memory",
                    "tag": ["counting", "motion"][: q + 1],
                }
                for q in range(2)
            ],
        }
        for v in range(2)
    }
    toml = (
        'rows = "mc.json"\nexplode = "mc_question"\nid = "{_key}_{id}"\n'
        'video = "videos/{metadata.video_id}.mp4"\noptions = "options"\nanswer = "answer_id"\n'
        'answer_format = "index"\ngroups = ["area", "tag"]\n'
    )
    folder = bench(tmp_path, data, "mc.json", "")
    (folder / "benchmark.toml").write_text('name = "pt"\n' + toml)
    found, problems = loaded(folder)
    assert problems == [] and sorted(found) == ["video_0_0", "video_0_1", "video_1_0", "video_1_1"]
    sample = found["video_1_1"]
    assert sample.answer == "B" and sample.metadata["_key"] == "video_1"
    assert sample.metadata["_index"] == 1 and sample.metadata["metadata"]["split"] == "valid"

    no_explode = "".join(
        line + "\n" for line in toml.splitlines() if line[:3] not in ("exp", "id ")
    )
    (folder / "benchmark.toml").write_text('name = "pt"\n' + no_explode)
    _, problems = loaded(folder)
    assert (
        "no question: the field 'question' is missing or empty; this row's field 'mc_question' "
        "holds a list of 2 records with 'question': explode = \"mc_question\" reads one row per "
        "element"
    ) in problems[0]


def test_an_object_holding_the_question_list(tmp_path: Path) -> None:
    data = {"version": 2, "questions": [{**ROW, "id": "a"}, {**ROW, "id": "b"}]}
    folder = bench(tmp_path, data, "q.json")
    _, problems = loaded(folder)
    assert "key 'questions': not a record but a list of 2 records" in problems[1]
    (folder / "benchmark.toml").write_text(BASE.format(rows="q.json") + 'explode = "questions"\n')
    found, problems = loaded(folder)
    assert problems == [] and sorted(found) == ["q-1-1", "q-1-2"]  # the object is record 1


# ------------------------------------------------------------------ joined answers, no gold
def test_answers_joined_by_id_and_rows_without_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """EgoSchema's shape: questions with `option 0`..`option 4`, the answers of a subset in
    {q_uid: index}. The other rows are asked and counted unscored (no-gold)."""
    rows = [
        {
            "q_uid": f"u{n}",
            "video": "clip0",
            "question": f"Q{n}?",
            **{f"option {k}": f"o{k}" for k in range(5)},
        }
        for n in range(4)
    ]
    extra = (
        'id = "q_uid"\noptions = ["option 0", "option 1", "option 2", "option 3", "option 4"]\n'
        'answer = "answer"\nanswers = { file = "subset_answers.json" }\n'
    )
    folder = bench(tmp_path, rows, "questions.json", extra)
    (folder / "subset_answers.json").write_text(json.dumps({"u0": 3, "u2": 0}))
    found, problems = loaded(folder)
    assert problems == []
    assert {i: s.answer for i, s in found.items()} == {"u0": "D", "u1": None, "u2": "A", "u3": None}

    assert vidbench("validate", "custom", folder) == 0
    assert (
        "note: 2 of 4 rows have no gold answer (field 'answer' and the answers file; e.g. u1): "
        "they are asked and counted unscored (no-gold)"
    ) in " ".join(capsys.readouterr().err.split())

    out = tmp_path / "run"
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"id": f"u{n}", "answer": "D"}) + "\n" for n in range(4)))
    assert (
        vidbench("run", f"custom:{folder}", "--model", f"predictions:{replies}", "--out", out) == 0
    )
    found_results = results(out)
    assert found_results["columns"]["Overall"] == 50.0 and found_results["column_n"]["Overall"] == 2
    assert found_results["scoring"]["no_gold"] == 2 and found_results["errors"] == 0
    assert samples(out)["u1"]["outcome"] == {"kind": "unscored", "reason": "no-gold"}
    assert samples(out)["u1"]["parsed"] == "D"

    (folder / "subset_answers.json").write_text(json.dumps({"u0": 3, "x9": 1}))
    _, problems = loaded(folder)
    assert problems == [
        f"1 answer(s) for ids no row has ('x9'); the answers are matched with the rows' ids "
        f"(the `id` key) [{folder / 'subset_answers.json'}]"
    ]


def test_answers_as_rows_with_a_key_field(tmp_path: Path) -> None:
    """ActivityNet-QA's shape: *_q.json and *_a.json, joined on question_id; the answer rows'
    other fields (type) join too."""
    questions = [
        {"video_name": "clip0", "question": f"q{n}?", "question_id": f"v_{n}"} for n in range(3)
    ]
    answers = [{"answer": "yes", "type": 3, "question_id": f"v_{n}"} for n in range(2)]
    toml = (
        'name = "anet"\nrows = "test_q.json"\nvideo = "videos/{video_name}.mp4"\n'
        'kind = "open-ended"\nid = "question_id"\nanswer = "answer"\ngroups = ["type"]\n'
        'answers = { file = "test_a.json", key = "question_id" }\n'
    )
    folder = make_bench(tmp_path, toml, questions, "test_q.json")
    write_rows(folder / "test_a.json", answers)
    found, problems = loaded(folder)
    assert problems == []
    assert found["v_0"].references == ("yes",) and found["v_0"].metadata["type"] == 3
    assert found["v_2"].references == ()


# ------------------------------------------------------------------ windows and groups
@pytest.mark.parametrize(
    ("ts", "want"),
    [
        ("76.01-84.2", (76.01, 84.2)),
        ("0 - 10", (0.0, 10.0)),
        ("", (None, None)),
        ("8-3", "the window ends (3.0 s) before it starts (8.0 s)"),
        ("nan-3", "ts's start must be a finite number of seconds, got 'nan'"),
        ("3-inf", "ts's end must be a finite number of seconds, got 'inf'"),
        ("12.5", "ts must be \"start-end\" in seconds, got '12.5'"),
    ],
)
def test_a_window_in_one_field(tmp_path: Path, ts: str, want: Any) -> None:
    folder = bench(tmp_path, [{**ROW, "ts": ts}], extra='window = "ts"\n')
    found, problems = loaded(folder)
    if isinstance(want, tuple):
        [sample] = found.values()
        assert (sample.media.start_s, sample.media.end_s) == want
    else:
        assert want in problems[0]


@pytest.mark.parametrize("start", [float("nan"), "NaN", "inf"])
def test_a_window_that_is_not_finite_is_a_problem(tmp_path: Path, start: Any) -> None:
    """A NaN start became the whole video before."""
    folder = bench(tmp_path, [{**ROW, "s": start, "e": 2}], extra='start = "s"\nend = "e"\n')
    found, problems = loaded(folder)
    assert found == {} and "s must be a finite number of seconds" in problems[0]


def test_a_whole_window_in_a_start_field_names_the_key(tmp_path: Path) -> None:
    folder = bench(tmp_path, [{**ROW, "ts": "1.5-3"}], extra='start = "ts"\n')
    _, problems = loaded(folder)
    assert (
        "ts holds '1.5-3', a whole window: a window in one \"start-end\" field is read with "
        'window = "ts"' in problems[0]
    )


def test_list_valued_and_missing_group_values(tmp_path: Path) -> None:
    rows = [
        {**ROW, "id": "q1", "tag": ["count", "colour"], "answer": "B"},
        {**ROW, "id": "q2", "tag": ["count"], "answer": "A"},
        {**ROW, "id": "q3", "tag": None, "answer": "B"},
    ]
    folder = bench(tmp_path, rows, extra='id = "id"\ngroups = ["tag"]\n')
    out = tmp_path / "run"
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        "".join(json.dumps({"id": f"q{n}", "answer": "B"}) + "\n" for n in (1, 2, 3))
    )
    assert (
        vidbench("run", f"custom:{folder}", "--model", f"predictions:{replies}", "--out", out) == 0
    )
    found = results(out)
    assert found["columns"] == {
        "Overall": pytest.approx(200 / 3),
        "(none)": 100.0,
        "colour": 100.0,
        "count": 50.0,
    }
    assert found["column_n"] == {"Overall": 3, "(none)": 1, "colour": 1, "count": 2}
    assert found["column_groups"] == {
        "Overall": ["Overall"],
        "tag (a row with several values counts in each)": ["(none)", "colour", "count"],
    }
    assert (
        samples(out)["q1"]["groups"]["tag"] == ["count", "colour"]
        and samples(out)["q3"]["groups"]["tag"] == "(none)"
    )
    table = (out / "table.md").read_text()
    assert "### tag (a row with several values counts in each)" in table


# ------------------------------------------------------------------ shapes refused
def test_options_as_records_name_the_path(tmp_path: Path) -> None:
    rows = [{**ROW, "options": [{"id": 0, "text": "red"}, {"id": 1, "text": "blue"}]}]
    _, problems = loaded(bench(tmp_path, rows))
    assert (
        "option 1 of 'options' is a record (id, text), not text: name its text field with "
        'a path, e.g. options = "choices[].text"' in problems[0]
    )


def test_a_nested_question_names_its_path(tmp_path: Path) -> None:
    rows = [{**{k: v for k, v in ROW.items() if k != "question"}, "qa": {"question": "Q?"}}]
    _, problems = loaded(bench(tmp_path, rows))
    assert (
        "no question: the field 'question' is missing or empty; it is in 'qa': name it "
        '"qa.question"' in problems[0]
    )


def test_a_missing_id_in_a_question_list_names_explode(tmp_path: Path) -> None:
    rows = [{"video": "clip0", "questions": [{**ROW, "qid": "a"}, {**ROW, "qid": "b"}]}]
    _, problems = loaded(bench(tmp_path, rows, extra='id = "qid"\n'))
    assert (
        "no id: the field 'qid' is missing or empty; this row's field 'questions' holds a list "
        "of 2 records with 'qid': explode = \"questions\" reads one row per element"
    ) in problems[0]


def test_a_wildcard_is_the_files_not_the_rows(tmp_path: Path) -> None:
    """`*` in the template matches folders; a `[` in a row's value is a name, with or without."""
    folder = bench(tmp_path, [{**ROW, "video": "clip[0]"}], extra="")
    (folder / "videos" / "clip0.mp4").rename(folder / "videos" / "clip[0].mp4")
    found, problems = loaded(folder)
    assert problems == [] and found["questions-1"].media.videos[0].name == "clip[0].mp4"
    (folder / "videos" / "a").mkdir()
    (folder / "videos" / "clip[0].mp4").rename(folder / "videos" / "a" / "clip[0].mp4")
    toml = (folder / "benchmark.toml").read_text().replace("videos/{video}", "videos/*/{video}")
    (folder / "benchmark.toml").write_text(toml)
    found, problems = loaded(folder)
    assert problems == [] and found["questions-1"].media.videos[0].parent.name == "a"
