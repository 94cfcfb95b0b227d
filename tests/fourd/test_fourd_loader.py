"""The 4D-Bench loader: official layout, option recognition, official rendering, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import make_qa_dataset
from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.benchmarks.fourd.options import find_options, find_question
from vidbench.core import records
from vidbench.core.errors import DataError
from vidbench.registry import get_task
from vidbench.tasks.problems import Problem


@pytest.mark.parametrize(
    "record",
    [
        {"Question": "Q?", "Options": ["(A) red", "(B) blue", "(C) green", "(D) black"]},
        {"Question": "Q?", "Options": ["red", "blue", "green", "black"]},
        {"question": "Q?", "choices": {"A": "red", "B": "blue", "C": "green", "D": "black"}},
        {
            "Question": "Q?",
            "Options": {"(A)": "red", "(B)": "blue", "(C)": "green", "(D)": "black"},
        },
        {"Question": "Q?", "A": "red", "B": "blue", "C": "green", "D": "black"},
        {"Question": "Q?", "(A)": "red", "(B)": "blue", "(C)": "green", "(D)": "black"},
        {
            "Q question": "Q?",
            "Option A": "(A) red",
            "Option B": "(B) blue",
            "Option C": "(C) green",
            "Option D": "(D) black",
        },
        {
            "Question": "Q?",
            "option_1": "A. red",
            "option_2": "B. blue",
            "option_3": "C. green",
            "option_4": "D. black",
        },
    ],
)
def test_recognises_question_and_options(record: dict) -> None:
    assert find_question(record) == "Q?"
    assert find_options(record) == ("red", "blue", "green", "black")


def test_unrecognisable_options_give_none() -> None:
    assert find_options({"Question": "Q?", "Stuff": "(A) x (B) y"}) is None
    assert find_options({"Options": ["a", "b", "c"]}) is None


def test_loads_release_root_and_data_folder(qa_release: Path) -> None:
    from_root = fourd_bench.load_qa(qa_release)
    data_dir = qa_release / "4D_Object_Question_Answering" / "data"
    from_data = fourd_bench.load_qa(data_dir)
    assert [s.id for s in from_root.items] == [s.id for s in from_data.items]
    assert len(from_root.items) == 20 and not from_root.problems
    sample = from_root.items[0]
    assert sample.metadata["uid"] == "0" * 32
    assert sample.metadata["subtask"] == "Object Counting"
    assert sample.answer == "A"
    assert sample.options == ("option A", "option B", "option C", "option D")
    assert sample.media.videos[8] == (
        data_dir / "4d_object_multi_view_videos" / ("0" * 32) / "view_8_rgb_white_bg.mp4"
    )
    assert len(sample.media.videos) == 24
    subtasks = {s.metadata["subtask"] for s in from_root.items}
    assert subtasks == set(fourd_bench.SUBTASKS)


def test_official_rendering_is_python_str_of_the_rest(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    record = {
        "Question": "What's it?",
        "Answer index": 3,
        "Alternatives": "(A) x | (B) y's | (C) z | (D) w",  # a field name vidbench cannot read
        "Category": "motion",
        "Extra": {"k": [1, 2]},
    }
    short = {**record, "Options": ["(A) x", "(B) y"]}
    bare = {"Question": "What's it?", "Answer index": 1, "Category": "motion"}
    qa = {"ab" * 16 + "_motion": record, "cd" * 16 + "_motion": short, "ef" * 16 + "_motion": bare}
    (data / "4d_qa.json").write_text(json.dumps(qa))
    loaded = fourd_bench.load_qa(data)
    [sample] = loaded.items
    rest = {k: v for k, v in record.items() if k not in ("Answer index", "Category")}
    assert sample.metadata["official_qa_text"] == str(rest)
    assert sample.metadata["official_qa_text"].startswith("{'Question': \"What's it?\"")
    assert sample.metadata["subtask"] == "Action" and sample.answer == "C"
    assert sample.options == ()  # not recognised, but the official prompt pastes them
    assert {p.record: p.message for p in loaded.problems} == {
        "cd" * 16 + "_motion": "'Options' holds 2 options, 4 expected",
        "ef" * 16 + "_motion": "no options: the record holds a question and nothing that could "
        "be its options",
    }


def test_bad_records_are_all_reported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    good = {"Question": "Q", "Options": ["a", "b", "c", "d"], "Category": "Appearance"}
    text = (
        "{"
        f'"{"1" * 32}_appearance": {json.dumps({**good, "Answer index": 2})},'
        f'"{"2" * 32}_appearance": {json.dumps({**good, "Answer index": 5})},'
        f'"{"3" * 32}_appearance": {json.dumps({**good, "Answer index": "1"})},'
        f'"{"4" * 32}_appearance": {json.dumps({**good, "Answer index": 1, "Category": "Smell"})},'
        f'"{"1" * 32}_appearance": {json.dumps({**good, "Answer index": 1})},'
        f'"{"5" * 32}_appearance": [1, 2]'
        "}"
    )
    (data / "4d_qa.json").write_text(text)
    loaded = fourd_bench.load_qa(data)
    assert [s.id for s in loaded.items] == ["1" * 32 + "_appearance"]
    assert loaded.items[0].answer == "A"  # the last of two copies, as json.load keeps it
    messages = {p.record: p.message for p in loaded.problems}
    assert messages == {
        "1" * 32 + "_appearance": "duplicate question id: 2 copies (records 1, 5 of the file); "
        "the last is used, as json.load does",
        "2" * 32 + "_appearance": "'Answer index' 5 is outside 1..4",
        "3" * 32 + "_appearance": "'Answer index' must be an integer 1..4, got '1'",
        "4" * 32 + "_appearance": "unknown Category 'Smell' (expected one of Object Counting, "
        "Temporal Relationship, Action, Spatial Relationship, Appearance)",
        "5" * 32 + "_appearance": "record is not a JSON object",
    }
    assert all(p.path == data / "4d_qa.json" for p in loaded.problems)


def test_malformed_json_names_the_record_and_its_position(tmp_path: Path) -> None:
    (tmp_path / "4d_qa.json").write_text('{"a_motion": {"Answer index": 1,,}}')
    loaded = fourd_bench.load_qa(tmp_path)
    assert loaded.items == []
    assert [(p.record, p.message) for p in loaded.problems] == [
        (
            "a_motion",
            "record 1 (line 1): malformed JSON at line 1, column 33: Expecting property name "
            "enclosed in double quotes; skipped",
        )
    ]


def _qa_text(n: int) -> str:
    """4d_qa.json as the release writes it (indented), `n` good records."""
    good = {"Question": "Q", "Options": ["a", "b", "c", "d"], "Category": "Appearance"}
    records = {f"{i:032x}_appearance": {**good, "Answer index": 1 + i % 4} for i in range(n)}
    return json.dumps(records, indent=4)


def test_a_broken_record_costs_itself_and_is_named(tmp_path: Path) -> None:
    """Each fault costs the record it is in; the records before and after it load: a comma
    missing inside a record, one missing between two records (both kept), a '{' left open, a
    byte that is not UTF-8, half of a character as a JSON escape."""
    text = _qa_text(8)
    ids = [f"{i:032x}_appearance" for i in range(8)]

    def record(i: int) -> str:  # the text of record i, from its key to its closing brace
        start = text.index(f'"{ids[i]}"')
        return text[start : text.index("}", start) + 1]

    text = text.replace(record(1), record(1).replace('"Q",', '"Q"'))  # a comma inside
    text = text.replace(record(2) + ",", record(2))  # a comma between 2 and 3
    text = text.replace(record(4), record(4)[:-1])  # its '{' left open
    text = text.replace(record(5), record(5).replace('"Q"', '"Q\\ud800"'))
    raw = text.encode().replace(
        record(6).encode(), record(6).replace("Q", "Q\xff").encode("latin-1")
    )
    (tmp_path / "4d_qa.json").write_bytes(raw)
    loaded = fourd_bench.load_qa(tmp_path)
    assert [s.id for s in loaded.items] == [ids[0], ids[2], ids[3], ids[7]]
    messages = {p.record: p.message for p in loaded.problems}
    assert messages == {
        ids[1]: "record 2 (line 13): malformed JSON at line 15, column 9: Expecting ',' "
        "delimiter; skipped",
        ids[3]: "record 4 (line 35): a ',' is missing before this record (line 35, column 5); "
        "read as if there",
        ids[4]: "record 5 (line 46): a bracket is not closed before the next record begins "
        "(line 57, column 1); skipped",
        ids[5]: "record 6 (line 57): an unpaired surrogate escape (\\ud8xx): no text; skipped",
        ids[6]: "record 7 (line 68): not UTF-8 text (byte 0xff at line 69, column 11); skipped",
    }


def test_missing_annotation_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no 4d_qa.json here or in 4D_Object_Question_Answering"):
        fourd_bench.load_qa(tmp_path)
    (tmp_path / "4d_qa.json").write_text("[]")
    with pytest.raises(DataError, match="expected a JSON object keyed"):
        fourd_bench.iter_qa(tmp_path)  # when called, not at its first sample


def test_captions_csv(tmp_path: Path) -> None:
    data = tmp_path / "4D_Object_Captioning" / "data"
    data.mkdir(parents=True)
    (data / "human_annotations.csv").write_bytes(
        b"folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        + f'{"a" * 32},one,two,"three, with comma",four,five\n'.encode()
        + f"{'b' * 32},one,,three,four,five\n".encode()
        + f"{'a' * 32},x,x,x,x,x\n".encode()
        + f"{'c' * 32},one,two,thr\xe9e,four,five\n".encode("latin-1")  # not UTF-8
        + f"{'d' * 32},une,deux,trois,quatre,cinq \u00e9t\u00e9\n".encode()
    )
    loaded = fourd_bench.load_captions(tmp_path)
    assert [s.id for s in loaded.items] == ["a" * 32, "d" * 32]  # the rest still load
    sample = loaded.items[0]
    assert sample.references == ("x", "x", "x", "x", "x")  # the last row of a uid, as a dict
    assert sample.kind == "caption"
    assert loaded.items[1].references[-1] == "cinq \u00e9t\u00e9"
    assert [(p.record, p.message) for p in loaded.problems] == [
        ("b" * 32, "line 3: caption_2 empty; object skipped"),
        ("c" * 32, "line 5: caption_3 is not UTF-8 (byte 0xe9); object skipped"),
        ("a" * 32, "duplicate folder_name on lines 2, 4; the last (line 4) is used, as the "
         "official evaluation's dict does"),
    ]  # fmt: skip
    assert all(p.path == data / "human_annotations.csv" for p in loaded.problems)


def test_captions_csv_missing_columns(tmp_path: Path) -> None:
    (tmp_path / "human_annotations.csv").write_text("folder_name,caption_1\nx,y\n")
    with pytest.raises(DataError, match=r"human_annotations.csv: missing columns \['caption_2'"):
        fourd_bench.load_captions(tmp_path)


def test_generated_dataset_copy_loads(tmp_path: Path, qa_release: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(qa_release, copy)
    assert len(fourd_bench.load_qa(copy).items) == 20
    assert make_qa_dataset  # the builder is shared with other tests


def test_an_unclosed_quote_is_named_and_the_swallowed_rows_recovered(tmp_path: Path) -> None:
    """A quote left open makes the csv module read the next records as one caption; the record
    is named by its line, the rows it swallowed are read again, and validate is not "ok"."""
    header = "folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
    rows = [
        f'{"a" * 32},"a cube spins,b,c,d,e\n',  # the quote is never closed
        f"{'b' * 32},one,two,three,four,five\n",
        f"{'c' * 32},uno,dos,tres,cuatro,cinco\n",
    ]
    csv_path = tmp_path / "human_annotations.csv"
    csv_path.write_text(header + "".join(rows) + f"{'d' * 32},1,2,3\nnot-a-uid,a,b,c,d,e\n")
    read = fourd_bench.read_references(csv_path)
    assert sorted(read.items) == ["b" * 32, "c" * 32]  # recovered; the broken object is not
    assert read.items["b" * 32] == ("one", "two", "three", "four", "five")
    messages = [str(issue.problem).rsplit(" [", 1)[0] for issue in read.issues]
    assert messages == [
        "line 2: a quoted field is not closed and runs over lines 3..6, which are rows "
        "of their own; this row skipped, the lines after it read one by one",
        "line 5: 4 fields, the header has 6; row skipped",
        "not-a-uid: line 6: folder_name 'not-a-uid' is not a uid (32 lowercase hex "
        "characters); row skipped",
    ]


def _with_repeats(tmp_path: Path) -> Path:
    """4d_qa.json whose ids repeat: record 1's id again as record 4 (another answer), record 2's
    as record 5 and as record 6 (not JSON); a probe file for record 2's id."""
    good = {"Question": "Q", "Options": ["a", "b", "c", "d"], "Category": "Action"}
    ids = [f"{i:032x}_motion" for i in (1, 2, 3, 1, 2)]
    records = [json.dumps({**good, "Answer index": 1 + i % 4}) for i in range(5)]
    text = ",\n".join(f'"{key}": {record}' for key, record in zip(ids, records, strict=True))
    broken = f'"{ids[1]}": {{"Answer index": 1,,}}'
    (tmp_path / "4d_qa.json").write_text("{\n" + text + ",\n" + broken + "\n}")
    (tmp_path / "probe.jsonl").write_text(json.dumps({"id": ids[1], "probe": {"speed": 2}}) + "\n")
    return tmp_path


def test_repeated_ids_keep_the_last_record_at_the_first_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many ids share a hash (here: all, as if every id collided), a repeated id keeps
    its last readable record, at its first record's place."""
    first, second, third = (f"{i:032x}_motion" for i in (1, 2, 3))
    data = _with_repeats(tmp_path)
    for hash_mask in (records._HASH_MASK, 0):
        monkeypatch.setattr(records, "_HASH_MASK", hash_mask)
        loaded = fourd_bench.load_qa(data)
        assert [(s.id, s.answer) for s in loaded.items] == [
            (first, "D"),
            (second, "A"),
            (third, "C"),
        ]
        assert loaded.items[1].metadata["probe"] == {"speed": 2}
        assert [(p.record, p.message) for p in loaded.problems] == [
            (first, "duplicate question id: 2 copies (records 1, 4 of the file); the last is "
             "used, as json.load does"),
            (second, "duplicate question id: 2 copies (records 2, 5 of the file); the last is "
             "used, as json.load does"),
            (second, "record 6 (line 7): malformed JSON at line 7, column 63: Expecting "
             "property name enclosed in double quotes; skipped"),
        ]  # fmt: skip


def test_the_qa_task_streams_what_it_loads(tmp_path: Path) -> None:
    """FourDQA.iter_load: the samples in load's order, each problem in its place among them."""
    task = get_task("4dbench-qa")
    data = _with_repeats(tmp_path)
    loaded = task.load(data)
    streamed = list(task.iter_load(data))
    assert [x for x in streamed if not isinstance(x, Problem)] == loaded.items
    assert [x for x in streamed if isinstance(x, Problem)] == loaded.problems
    # the repeated ids first (known before any record is given), then the records in file order
    kinds = [type(x).__name__ if isinstance(x, Problem) else x.id[-8:] for x in streamed]
    assert kinds == ["Problem", "Problem", "1_motion", "2_motion", "3_motion", "Problem"]
