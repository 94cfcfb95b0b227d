"""MMWorld loading: the official mmworld.json, row exports, layouts, subsets, raters, bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from mmworld_support import README_RECORD, make_mmworld, records, rows
from vidbench.benchmarks.mmworld import loader as mmworld
from vidbench.benchmarks.mmworld.fields import DISCIPLINES, FACETS
from vidbench.benchmarks.mmworld.validate import validate
from vidbench.cli import main


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mmworld(tmp_path_factory.mktemp("mmworld"))


def test_official_file_loads_every_question(dataset: Path) -> None:
    loaded = mmworld.load(dataset)
    assert loaded.problems == []
    assert len(loaded.items) == 14
    by_id = {s.id: s for s in loaded.items}
    first = by_id["eng_vid1#0"]  # the README record's question
    q = README_RECORD["questions"][0]
    assert first.question == q["question"] and first.answer == "a"
    assert first.options == tuple(q["options"][k] for k in "abcd")
    assert first.metadata["discipline"] == "Tech & Engineering"
    assert first.metadata["facet"] == "Explanation"
    assert first.metadata["flags"] == {
        "requires_audio": False,
        "requires_domain_knowledge": False,
        "requires_visual": True,
        "question_only": False,
    }
    assert first.media.videos[0] == dataset / "eng_vid1" / "eng_vid1.mp4"
    # every discipline (Sports & Arts read as Table 3's Art & Sports) and every question type
    assert {s.metadata["discipline"] for s in loaded.items} == set(DISCIPLINES)
    assert {s.metadata["facet"] for s in loaded.items} == set(FACETS)
    three = by_id["vid2#1"]  # question 5 has options a..c
    assert three.metadata["labels"] == ("a", "b", "c") and len(three.options) == 3
    # the usual layouts: upper-case extension, flat, the folder's single video, other container
    assert by_id["vid1#0"].media.videos[0].name == "vid1.MP4"
    assert by_id["vid2#0"].media.videos[0] == dataset / "vid2.mp4"
    assert by_id["vid3#0"].media.videos[0].name == "clip.webm"
    assert by_id["vid4#0"].media.videos[0].name == "vid4.mkv"


def test_data_argument_may_name_the_file(dataset: Path) -> None:
    assert [s.id for s in mmworld.load(dataset / "mmworld.json").items] == [
        s.id for s in mmworld.load(dataset).items
    ]


def _comparable(samples: list, root: Path) -> list:
    return [
        (s.id, s.question, s.options, s.answer, s.media.videos[0].relative_to(root), s.metadata)
        for s in samples
    ]


def _write_csv(path: Path, table: list[dict[str, Any]]) -> Path:
    """The rows as CSV: options as option_a.. columns, flags as text."""
    names = [k for k in table[0] if k != "options"] + [f"option_{x}" for x in "abcd"]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, names)
        writer.writeheader()
        for r in table:
            opts = {f"option_{k}": v for k, v in r["options"].items()}
            writer.writerow({**{k: v for k, v in r.items() if k != "options"}, **opts})
    return path


@pytest.mark.parametrize("suffix", ["jsonl", "json", "csv"])
def test_row_exports_load_the_same_questions(dataset: Path, tmp_path: Path, suffix: str) -> None:
    table = rows(records())
    path = tmp_path / f"questions.{suffix}"
    if suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in table))
    elif suffix == "json":
        path.write_text(json.dumps(table))
    else:
        _write_csv(path, table)
    for video in dataset.iterdir():  # same videos, next to the export
        if video.name != "mmworld.json":
            (tmp_path / video.name).symlink_to(video)
    loaded = mmworld.load(path)
    assert loaded.problems == []
    assert _comparable(loaded.items, tmp_path) == _comparable(mmworld.load(dataset).items, dataset)


def test_a_csv_row_with_an_unclosed_quote_is_named(dataset: Path, tmp_path: Path) -> None:
    table = rows(records())
    path = _write_csv(tmp_path / "questions.csv", table)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(",", ',"', 1)  # the second question: a quote never closed
    path.write_text("".join(lines))
    for video in dataset.iterdir():
        if video.name != "mmworld.json":
            (tmp_path / video.name).symlink_to(video)
    loaded = mmworld.load(path, subset=None)
    assert len(loaded.items) == len(table) - 1  # only the broken row is lost
    [problem] = loaded.problems
    assert problem.record == "line 3" and "a quoted field is not closed" in problem.message


def test_subsets_and_transcripts(tmp_path: Path) -> None:
    data = records()[:3]
    data[1]["subset"] = "audio-only"
    data[1]["transcript"] = [{"start": 0, "end": 2.5, "text": "Hello there."}, "Second line."]
    data[2]["subset"] = "Synthetic II"
    data[2]["questions"][0].pop("type")  # synthetic questions need no type
    make_mmworld(tmp_path, data)
    main_set = mmworld.load(tmp_path)
    audio = mmworld.load(tmp_path, "audio")
    visual = mmworld.load(tmp_path, "visual")
    assert [s.metadata["video_id"] for s in main_set.items] == ["vid0", "vid0"]
    assert {s.metadata["subset"] for s in audio.items} == {"audio"}
    assert audio.items[0].metadata["transcript"] == "[0.0s-2.5s] Hello there.\nSecond line."
    assert visual.items[0].metadata["facet"] is None and visual.problems == []
    assert len(mmworld.load(tmp_path, None).items) == 6


def _broken(root: Path) -> Path:
    data = records()
    data[0]["questions"][1]["correct_answer_label"] = "e"  # not among its options
    data[1]["discipline"] = "Astrology"  # unknown discipline
    data[2]["questions"] = []  # a video record with no questions
    data[3]["questions"][0]["answer"] = "something else"  # text differs from option (validate)
    make_mmworld(root, data)
    (root / "vid4" / "vid4.mkv").unlink()  # a missing video
    (root / "vid6" / "vid6.mp4").write_bytes(b"not a video")  # unreadable (validate)
    return root


def test_bad_input_is_named_and_the_rest_loads(tmp_path: Path) -> None:
    loaded = mmworld.load(_broken(tmp_path))
    messages = [str(p) for p in loaded.problems]
    assert len(loaded.items) == 14 - 1 - 2 - 2 - 2
    assert any(
        "vid0#1: video vid0: correct_answer_label 'e' is not among its options (a, b, c" in m
        for m in messages
    )
    assert sum("video vid1: unknown discipline 'Astrology'" in m for m in messages) == 2
    assert any(m.startswith("vid2: video vid2 has no questions") for m in messages)
    assert sum("video vid4: video not found" in m for m in messages) == 2
    assert len(messages) == 6


def test_validate_lists_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _broken(tmp_path)
    problems = [str(p) for p in validate(root)]
    assert len(problems) == 6 + 1 + 1
    assert any("vid3#0: video vid3: answer 'something else' is not option" in p for p in problems)
    assert any(p.startswith("vid6: video vid6 is unreadable") for p in problems)
    assert main(["--no-progress", "validate", "mmworld", str(root)]) == 1
    assert "video vid4: video not found" in capsys.readouterr().out
    assert main(["--no-progress", "validate", "mmworld", str(make_mmworld(tmp_path / "ok"))]) == 0


def test_human_raters_give_difficulty(tmp_path: Path) -> None:
    root = make_mmworld(tmp_path)
    raters = {"vid0#0": [True, True, True], "vid0#1": [True, "false", 1], "eng_vid1#0": [0, 0, 0]}
    raters["nope#9"] = [True, True, True]
    raters["vid1#0"] = [True, True]
    (root / mmworld.RATERS_FILE).write_text(json.dumps(raters))
    loaded = mmworld.load(root)
    by_id = {s.id: s for s in loaded.items}
    assert by_id["vid0#1"].metadata["raters"] == (True, False, True)
    assert by_id["eng_vid1#0"].metadata["raters"] == (False, False, False)
    assert "raters" not in by_id["vid1#0"].metadata
    assert [p.record for p in loaded.problems] == ["vid1#0"]
    assert {p.record for p in validate(root)} == {"vid1#0", "nope#9"}


def test_a_broken_record_of_the_annotations_costs_itself(tmp_path: Path) -> None:
    """mmworld.json, indented as released, with a comma missing in the second video's record
    and a byte that is not UTF-8 in the third's: those two are named, the other videos load;
    a CSV row with such a byte is named with its column; a broken raters entry costs itself."""
    root = make_mmworld(tmp_path / "json")
    path = root / "mmworld.json"
    data = json.loads(path.read_text())
    text = json.dumps(data, indent=1)
    second = text.index('"video_id": "{}"'.format(data[1]["video_id"]))
    text = text[:second] + text[second:].replace(",", "", 1)  # after the second's video_id
    third = text.encode().index(f'"{data[2]["discipline"]}"'.encode())
    raw = text.encode()
    path.write_bytes(raw[: third + 1] + b"\xff" + raw[third + 1 :])
    loaded = mmworld.load(root)
    lost = {data[1]["video_id"], data[2]["video_id"]}
    expected = [s for s in mmworld.load(make_mmworld(tmp_path / "ok")).items]
    assert [s.id for s in loaded.items] == [
        s.id for s in expected if s.id.partition("#")[0] not in lost
    ]
    assert [p.record for p in loaded.problems] == ["record 2", "record 3"]
    assert "Expecting ',' delimiter; record skipped" in loaded.problems[0].message
    assert "not UTF-8 text (byte 0xff at line" in loaded.problems[1].message

    table = rows(records())
    names = [k for k in table[0] if k != "options"]
    csv_path = _write_csv(root / "questions.csv", table)
    lines = csv_path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b",", b",\xe9", 1)  # the second question's second column
    csv_path.write_bytes(b"\n".join(lines))
    from_csv = mmworld.load(csv_path, subset=None)
    assert len(from_csv.items) == len(table) - 1
    [problem] = from_csv.problems
    assert (problem.record, problem.message) == (
        "line 3",
        f"{names[1]} is not UTF-8 (byte 0xe9); row skipped",
    )

    raters = root / mmworld.RATERS_FILE
    raters.write_text('{"vid0#0": [true, true, true],\n "vid0#1": [true false, true]}')
    read, problems = mmworld.read_raters(root)
    assert read == {"vid0#0": (True, True, True)}
    assert [p.record for p in problems] == ["vid0#1"]
