"""The gold letter is never guessed differently by file type and never shifted: options keep
their positions, `auto` reads a JSON number and a CSV cell of the same digits alike, and a value
that names two different options is reported as ambiguous instead of picked. The property test
writes the same rows as CSV, JSON, JSON Lines and Parquet and asks for identical gold."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_support import make_bench, vidbench, write_clip, write_rows
from vidbench.benchmarks.custom.loader import load
from vidbench.benchmarks.custom.spec import read_spec

SUFFIXES = (".csv", ".json", ".jsonl", ".parquet")
PER_OPTION = """name = "per-option"
rows = "questions.csv"
video = "videos/{video}.mp4"
question = "question"
options = ["a0", "a1", "a2", "a3", "a4"]
answer = "answer"
"""


def load_folder(folder: Path) -> tuple[dict[str, Any], list[str]]:
    found = load(read_spec(folder), folder)
    return {s.id: s for s in found.items}, [str(p) for p in found.problems]


def test_an_empty_option_never_shifts_the_gold(tmp_path: Path) -> None:
    """a0..a4 with a2 empty and answer 3 ("train"): today's reading skipped a2, so gold D
    ("boat"). Now it is a problem, or with empty_options = "drop" the fourth column: "train"."""
    row = {
        "video": "clip0",
        "question": "What passes?",
        "answer": 3,
        "a0": "car",
        "a1": "bus",
        "a2": "",
        "a3": "train",
        "a4": "boat",
    }
    folder = make_bench(tmp_path / "bench", PER_OPTION, [row], "questions.csv")
    samples, problems = load_folder(folder)
    assert samples == {}
    [problem] = problems
    assert "'a2' is empty, before options that are not" in problem
    assert 'empty_options = "drop"' in problem
    assert vidbench("validate", "custom", folder) == 1

    (folder / "benchmark.toml").write_text(PER_OPTION + 'empty_options = "drop"\n')
    samples, problems = load_folder(folder)
    [sample] = samples.values()
    assert problems == []
    assert sample.options == ("car", "bus", "train", "boat")
    assert sample.options["ABCD".index(sample.answer)] == "train"


def test_trailing_empty_options_are_fewer_options(tmp_path: Path) -> None:
    row = {
        "video": "clip0",
        "question": "Light or dark?",
        "answer": "B",
        "a0": "light",
        "a1": "dark",
        "a2": "",
        "a3": "",
        "a4": "",
    }
    samples, problems = load_folder(make_bench(tmp_path, PER_OPTION, [row], "questions.csv"))
    assert problems == [] and samples["questions-1"].options == ("light", "dark")
    assert samples["questions-1"].answer == "B"


def test_no_options_or_too_many_are_problems_of_their_row(tmp_path: Path) -> None:
    """A row with every option empty, or 27 options, once stopped the whole run (exit 2)."""
    rows = [
        {"video": "clip0", "question": "Empty?", "answer": 0, **{f"a{k}": "" for k in range(5)}},
        {
            "video": "clip0",
            "question": "Fine?",
            "answer": 1,
            **{f"a{k}": f"o{k}" for k in range(5)},
        },
    ]
    folder = make_bench(tmp_path / "bench", PER_OPTION, rows, "questions.csv")
    samples, problems = load_folder(folder)
    assert list(samples) == ["questions-2"]
    assert problems == [
        "questions-1: line 2: 0 option(s); a multiple-choice question needs 2 or more "
        f"[{folder / 'questions.csv'}]"
    ]
    many = {"video": "clip0", "question": "Which?", "options": [str(n) for n in range(27)],
            "answer": "A"}  # fmt: skip
    folder = make_bench(tmp_path / "many", AUTO.format(suffix=".jsonl"), [many, ROW_OK])
    samples, problems = load_folder(folder)
    assert list(samples) == ["questions-2"] and "27 options; at most 26" in problems[0]


ROW_OK = {"video": "clip0", "question": "Which?", "options": ["red", "blue"], "answer": "A"}
AUTO = """name = "numbers"
rows = "questions{suffix}"
video = "videos/{{video}}.mp4"
"""


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_auto_reads_a_csv_and_a_json_file_alike(tmp_path: Path, suffix: str) -> None:
    """Options "1".."5" and the answer 1: today auto read the CSV cell "1" as the text (A) and
    the JSON number 1 as an index (B). Both name an option: the row is ambiguous, in both."""
    row = {
        "video": "clip0",
        "question": "How many?",
        "options": ["1", "2", "3", "4", "5"],
        "answer": 1,
    }
    toml = AUTO.format(suffix=suffix)
    folder = make_bench(tmp_path, toml, [row], f"questions{suffix}")
    samples, problems = load_folder(folder)
    assert samples == {}
    where = "line 2" if suffix == ".csv" else "record 1"
    assert problems == [
        f"questions-1: {where}: ambiguous answer '1': as an index it is B ('2'); as the text it "
        f"is A ('1'); say which with answer_format = 'index' or 'text' "
        f"[{folder / f'questions{suffix}'}]"
    ]
    for form, letter in (("index", "B"), ("text", "A")):
        (folder / "benchmark.toml").write_text(toml + f'answer_format = "{form}"\n')
        samples, problems = load_folder(folder)
        assert problems == [] and samples["questions-1"].answer == letter


def test_a_letter_that_is_also_an_option_elsewhere_is_ambiguous(tmp_path: Path) -> None:
    row = {"video": "clip0", "question": "Which?", "options": ["B", "A"], "answer": "A"}
    _, problems = load_folder(make_bench(tmp_path, AUTO.format(suffix=".jsonl"), [row]))
    assert (
        "ambiguous answer 'A': as a letter it is A ('B'); as the text it is B ('A')"
        in (problems[0])
    )


def test_validate_lists_ambiguous_rows(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rows = [
        {"video": "clip0", "question": "Count?", "options": ["3", "2", "4"], "answer": "2"},
        {"video": "clip0", "question": "Count?", "options": ["3", "2", "4"], "answer": "4"},
    ]
    folder = make_bench(tmp_path, AUTO.format(suffix=".jsonl"), rows)
    assert vidbench("validate", "custom", folder) == 1
    said = capsys.readouterr().out
    assert "questions-1: line 1: ambiguous answer '2'" in said  # the index 2 or the option "2"
    assert "questions-2" not in said  # 4 is no index of three options: the option "4"


# ------------------------------------------------------------------ the same rows, four files
TEXTS = st.sampled_from(["0", "1", "2", "3", "A", "B", "b", "red", "Blue", "A. red", "B. blue"])
OPTIONS = st.lists(TEXTS, min_size=2, max_size=5)


@st.composite
def rows_of_one_kind(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """Rows whose answers are all numbers or all text (a Parquet column holds one type), and
    an answer_format."""
    numbers = draw(st.booleans())
    answer = st.integers(0, 5) if numbers else st.one_of(TEXTS, st.sampled_from(["c", "(b)"]))
    rows = draw(
        st.lists(
            st.fixed_dictionaries({"options": OPTIONS, "answer": answer}), min_size=1, max_size=6
        )
    )
    form = draw(st.sampled_from(["auto", "letter", "index", "text"]))
    return [
        {"id": f"q{n}", "video": "clip0", "question": "Which?", **r} for n, r in enumerate(rows)
    ], form


def _gold(folder: Path) -> dict[str, str | None]:
    """Each row's gold letter; "ambiguous" or "none" for a row that has no letter."""
    found = load(read_spec(folder), folder)
    gold: dict[str, str | None] = {s.id: s.answer for s in found.items}
    gold.update(
        {p.record: "ambiguous" if "ambiguous" in p.message else "none" for p in found.problems}
    )
    return gold


@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clip")
    write_clip(folder / "videos" / "clip0.mp4", 90)
    return folder


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=rows_of_one_kind())
def test_the_same_rows_give_the_same_gold_in_every_file_type(
    case: tuple[list[dict[str, Any]], str],
    clip_folder: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    rows, form = case
    golds = []
    for suffix in SUFFIXES:
        folder = tmp_path_factory.mktemp("bench")
        shutil.copytree(clip_folder / "videos", folder / "videos")
        write_rows(folder / f"questions{suffix}", rows)
        toml = AUTO.format(suffix=suffix) + f'id = "id"\nanswer_format = "{form}"\n'
        (folder / "benchmark.toml").write_text(toml)
        golds.append(_gold(folder))
    assert golds[0] and all(gold == golds[0] for gold in golds[1:]), (rows, form, golds)
    assert all(set(gold) == {r["id"] for r in rows} for gold in golds)
