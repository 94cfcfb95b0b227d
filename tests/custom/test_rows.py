"""A declared benchmark's rows: the four file formats read alike; options and answers in every
documented shape; every bad row a problem naming the row and its file, the rest loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from custom_support import ISSUE_TOML, ROWS, make_bench, write_rows
from vidbench.benchmarks.custom.loader import load
from vidbench.benchmarks.custom.spec import read_spec
from vidbench.core.records import Sample


def loaded(folder: Path) -> tuple[dict[str, Sample], list[str]]:
    result = load(read_spec(folder), folder)
    return {s.id: s for s in result.items}, [str(p) for p in result.problems]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_every_format_gives_the_same_samples(tmp_path: Path, suffix: str) -> None:
    rows = [{"id": f"q{i}", **r} for i, r in enumerate(ROWS)]
    toml = ISSUE_TOML.replace("questions.jsonl", f"questions{suffix}")
    folder = make_bench(tmp_path, toml, rows, f"questions{suffix}")
    samples, problems = loaded(folder)
    assert problems == []
    assert list(samples) == [f"q{i}" for i in range(6)]
    q1 = samples["q1"]
    assert q1.kind == "mcq" and q1.question == "What happens in clip 1 (question 1)?"
    assert q1.options == ("event 1a", "event 1b", "event 1c", "event 1d")  # "B. " prefixes gone
    assert q1.answer == "B" and q1.media.videos == {0: folder / "videos" / "clip1.mp4"}
    assert q1.metadata["domain"] == "kitchen" and q1.metadata["_file"] == "questions"
    assert [s.answer for s in samples.values()] == list("ABCDAB")


def test_ids_without_an_id_field_count_rows_in_their_file(tmp_path: Path) -> None:
    samples, _ = loaded(make_bench(tmp_path))
    assert list(samples) == [f"questions-{n}" for n in range(1, 7)]


def _one(tmp_path: Path, row: dict[str, Any], toml_extra: str = "", options: str = "") -> Sample:
    toml = ISSUE_TOML + toml_extra
    if options:
        toml = toml.replace('options = "options"', f"options = {options}")
    samples, problems = loaded(make_bench(tmp_path, toml, [row]))
    assert problems == []
    [sample] = samples.values()
    return sample


BASE = {"id": "q", "video_id": "clip0", "question": "Which?", "domain": "d"}


@pytest.mark.parametrize(
    ("options", "want"),
    [
        (["red", "blue", "green"], ("red", "blue", "green")),
        (["A. red", "B. blue", "C. green"], ("red", "blue", "green")),
        (["(A) red", "(B) blue"], ("red", "blue")),
        (["A red", "A blue"], ("A red", "A blue")),  # not labels: kept whole
        ({"B": "blue", "A": "red"}, ("red", "blue")),
        ({"a": "red", "b": "blue"}, ("red", "blue")),
        ({"option_1": "red", "option_2": "blue"}, ("red", "blue")),
        ('["red", "blue"]', ("red", "blue")),  # JSON text, as a CSV cell holds it
    ],
)
def test_option_shapes(tmp_path: Path, options: Any, want: tuple[str, ...]) -> None:
    sample = _one(tmp_path, {**BASE, "options": options, "answer": "A"})
    assert sample.options == want


def test_one_field_per_option_skips_empty_ones(tmp_path: Path) -> None:
    row = {**BASE, "opt_a": "red", "opt_b": "blue", "opt_c": "", "answer": "B"}
    sample = _one(tmp_path, row, options='["opt_a", "opt_b", "opt_c"]')
    assert sample.options == ("red", "blue") and sample.answer == "B"


@pytest.mark.parametrize(
    ("answer", "extra", "options", "want"),
    [
        ("B", "", ["red", "blue", "green"], "B"),
        ("(b)", "", ["red", "blue", "green"], "B"),
        (1, "", ["red", "blue", "green"], "B"),  # a JSON number: an index from 0
        ("1", "index_base = 1\n", ["red", "blue", "green"], "A"),
        ("blue", "", ["red", "blue", "green"], "B"),
        ("Green", "", ["red", "blue", "green"], "C"),
        ("C. green", "", ["A. red", "B. blue", "C. green"], "C"),
        ("4", "", ["3", "4", "5"], "B"),  # MVBench's counting answers are the option's text
        ("1", 'answer_format = "index"\n', ["3", "4", "5"], "B"),
    ],
)
def test_answer_shapes(tmp_path: Path, answer: Any, extra: str, options: list, want: str) -> None:
    sample = _one(tmp_path, {**BASE, "options": options, "answer": answer}, extra)
    assert sample.answer == want


def test_bad_rows_are_named_and_the_rest_load(tmp_path: Path) -> None:
    good = {**BASE, "options": ["red", "blue"], "answer": "A", "hint": "x"}
    rows = [
        {**good, "id": "ok"},
        {**good, "id": "no-video", "video_id": "missing"},
        {**good, "id": "bad-answer", "answer": "purple"},
        {**good, "id": "ok"},
        {**good, "id": "no-group", "domain": None},
        {**good, "id": "one-option", "options": ["red"]},
        {**good, "id": "no-question", "question": " "},
        {**good, "id": "window", "start": 5, "end": 2},
        {k: v for k, v in good.items() if k != "hint"} | {"id": "prompt-field"},
    ]
    toml = ISSUE_TOML + 'start = "start"\nend = "end"\nprompt = "{question} {hint}"\n'
    folder = make_bench(tmp_path, toml, rows)
    rows_file = folder / "questions.jsonl"
    with rows_file.open("a") as f:
        f.write('{"id": "broken", \n')
    samples, problems = loaded(folder)
    assert list(samples) == ["ok", "no-group"]  # a row without a group value is in "(none)"
    expected = [
        f"line 10: malformed JSON: Expecting property name enclosed in double quotes [{rows_file}]",
        f"no-video: line 2: missing video {folder / 'videos' / 'missing.mp4'} [{rows_file}]",
        "bad-answer: line 3: answer 'purple' is not a letter A-B, an index 0-1 (index_base = 0) "
        f"or the text of one option (answer_format = 'auto') [{rows_file}]",
        "ok: line 4: duplicate id (first at questions.jsonl line 1); this row skipped "
        f"[{rows_file}]",
        "one-option: line 6: 1 option(s); a multiple-choice question needs 2 or more "
        f"[{rows_file}]",
        f"no-question: line 7: no question: the field 'question' is missing or empty [{rows_file}]",
        f"window: line 8: the window ends (2.0 s) before it starts (5.0 s) [{rows_file}]",
        "prompt-field: line 9: the prompt template needs the field 'hint', which this row lacks "
        f"[{rows_file}]",
    ]
    assert sorted(problems) == sorted(expected)


def test_a_missing_rows_file_is_a_problem(tmp_path: Path) -> None:
    folder = make_bench(tmp_path)
    (folder / "questions.jsonl").unlink()
    samples, problems = loaded(folder)
    assert samples == {}
    assert problems == [
        f"no rows file here (rows = 'questions.jsonl') [{folder / 'questions.jsonl'}]"
    ]


def test_csv_lines_of_the_wrong_width_are_named(tmp_path: Path) -> None:
    toml = ISSUE_TOML.replace("questions.jsonl", "questions.csv")
    folder = make_bench(tmp_path, toml, ROWS, "questions.csv")
    path = folder / "questions.csv"
    path.write_text(path.read_text() + 'clip0,"Extra?",x\n')
    samples, problems = loaded(folder)
    assert len(samples) == 6
    assert problems == [f"line 8: 3 fields, the header has 5; row skipped [{path}]"]


def test_several_rows_files_with_their_own_videos_and_fields(tmp_path: Path) -> None:
    folder = make_bench(tmp_path)
    write_rows(
        folder / "extra" / "more.json", [{**BASE, "id": "m1", "options": ["x", "y"], "answer": "y"}]
    )
    (folder / "benchmark.toml").write_text(
        "\n".join(line for line in ISSUE_TOML.splitlines() if not line.startswith("rows ="))
        + "\n"
        + '[[rows]]\npath = "questions.jsonl"\nset = {source = "main"}\n'
        '[[rows]]\npath = "extra/*.json"\nvideo = "videos/{video_id}.mp4"\n'
        'set = {source = "extra"}\n'
    )
    samples, problems = loaded(folder)
    assert problems == [] and len(samples) == 7
    assert samples["m1"].answer == "B" and samples["m1"].metadata["source"] == "extra"
    assert samples["m1"].metadata["_file"] == "more"
    assert samples["questions-1"].metadata["source"] == "main"


def test_several_videos_per_row(tmp_path: Path) -> None:
    """Two views from templates, or from a field holding the paths: the model sees each
    view's frames after a "Video K:" line, then the prompt."""
    from vidbench.media.frames import load_frames
    from vidbench.registry import get_task

    folder = make_bench(tmp_path)
    for side in ("left", "right"):
        for i in range(3):
            (folder / side).mkdir(exist_ok=True)
            (folder / side / f"clip{i}.mp4").write_bytes(
                (folder / "videos" / f"clip{i}.mp4").read_bytes()
            )
    rows = [
        {**r, "clips": [f"left/{r['video_id']}.mp4", f"right/{r['video_id']}.mp4"]} for r in ROWS
    ]
    write_rows(folder / "questions.jsonl", rows)
    by_template = ISSUE_TOML.replace(
        'video = "videos/{video_id}.mp4"', 'video = ["left/{video_id}.mp4", "right/{video_id}.mp4"]'
    ).replace("frames = 8", "frames = 3")
    by_field = by_template.replace(
        'video = ["left/{video_id}.mp4", "right/{video_id}.mp4"]', 'videos = "clips"\nviews = 2'
    )
    for toml in (by_template, by_field):
        (folder / "benchmark.toml").write_text(toml)
        task = get_task(f"custom:{folder}")
        [sample, *_] = task.load(folder).items
        assert sample.media.videos == {0: folder / "left/clip0.mp4", 1: folder / "right/clip0.mp4"}
        frames = load_frames(sample.media, task.frame_spec)
        [message] = task.build_messages(sample, frames)
        kinds = [p.text if hasattr(p, "text") else "image" for p in message.content]
        assert kinds[:8] == ["Video 1:", *["image"] * 3, "Video 2:", *["image"] * 3]
        assert len(kinds) == 9
        assert kinds[8].startswith("What happens in clip 0")


def test_a_video_that_is_a_link_loop_says_so(tmp_path: Path) -> None:
    folder = make_bench(tmp_path, ISSUE_TOML, [{**BASE, "id": "q", "video_id": "loop"}])
    loop = folder / "videos" / "loop.mp4"
    loop.symlink_to(loop)
    samples, problems = loaded(folder)
    assert not samples
    assert [str(p) for p in problems] == [
        f"q: line 1: missing video {loop} (a link loop) [{folder / 'questions.jsonl'}]"
    ]
