"""`vidbench predictions RESULTS`: the model's answers keyed by row id, in the benchmark's own
answer format (index, letter, text; CSV or JSON), for rows with and without gold."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from custom_support import make_bench, predictions, vidbench

QUESTIONS = [
    {"q_uid": f"u{n}", "video": "clip0", "question": f"Q{n}?",
     **{f"option {k}": f"o{n}{k}" for k in range(5)}}
    for n in range(4)
]  # fmt: skip
EGO = """name = "ego"
rows = "questions.json"
video = "videos/{video}.mp4"
id = "q_uid"
options = ["option 0", "option 1", "option 2", "option 3", "option 4"]
answer = "answer"
answers = { file = "subset_answers.json" }
"""


@pytest.fixture
def ego(tmp_path: Path) -> Path:
    folder = make_bench(tmp_path / "ego", EGO, QUESTIONS, "questions.json")
    (folder / "subset_answers.json").write_text(json.dumps({"u0": 3, "u2": 0}))
    return folder


def run(folder: Path, tmp_path: Path, replies: dict[str, str]) -> Path:
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", replies)
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out) == 0
    return out


def test_answers_in_the_files_own_format(
    ego: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = run(ego, tmp_path, {"u0": "D", "u1": "(B)", "u2": "I cannot tell", "u3": "E"})
    assert vidbench("predictions", out, "--out", tmp_path / "answers.json") == 0
    # the gold answers are indexes from 0: so are the model's; an unreadable reply is null
    assert json.loads((tmp_path / "answers.json").read_text()) == {
        "u0": 3, "u1": 1, "u2": None, "u3": 4
    }  # fmt: skip
    said = " ".join(capsys.readouterr().err.split())
    assert "wrote 4 answers (indexes)" in said
    assert "1 left empty" in said and "(u2)" in said

    assert vidbench("predictions", out, "--out", tmp_path / "answers.csv", "--format", "text") == 0
    with (tmp_path / "answers.csv").open() as f:
        assert list(csv.reader(f)) == [
            ["q_uid", "answer"], ["u0", "o03"], ["u1", "o11"], ["u2", ""], ["u3", "o34"]
        ]  # fmt: skip


def test_dropped_empty_options_keep_their_positions(tmp_path: Path) -> None:
    rows = [{"id": "q", "video": "clip0", "question": "Which?", "answer": 3,
             "a0": "car", "a1": "bus", "a2": "", "a3": "train", "a4": "boat"}]  # fmt: skip
    toml = (
        'name = "nx"\nrows = "q.csv"\nvideo = "videos/{video}.mp4"\nid = "id"\n'
        'options = ["a0", "a1", "a2", "a3", "a4"]\nempty_options = "drop"\n'
    )
    folder = make_bench(tmp_path / "nx", toml, rows, "q.csv")
    out = run(folder, tmp_path, {"q": "(C)"})  # the third option shown: "train"
    assert vidbench("predictions", out, "--out", tmp_path / "p.json") == 0
    assert json.loads((tmp_path / "p.json").read_text()) == {"q": 3}


def test_an_id_template_is_written_under_id(tmp_path: Path) -> None:
    rows = [{"video": "clip0", "qid": 6, "question": "Which?", "options": ["a", "b"], "answer": 1}]
    toml = 'name = "t"\nrows = "q.jsonl"\nvideo = "videos/{video}.mp4"\nid = "{video}_{qid}"\n'
    folder = make_bench(tmp_path / "t", toml, rows, "q.jsonl")
    out = run(folder, tmp_path, {"clip0_6": "B"})
    assert vidbench("predictions", out, "--out", tmp_path / "p.csv") == 0
    assert (tmp_path / "p.csv").read_text() == "id,answer\nclip0_6,1\n"


def test_without_any_gold_the_format_must_be_given(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """TVQA's test-public split has no answer_idx at all."""
    rows = [{"qid": 7, "q": "What?", "vid_name": "clip0", **{f"a{k}": f"t{k}" for k in range(5)}}]
    toml = (
        'name = "tvqa"\nrows = "tvqa_test_public.jsonl"\nvideo = "videos/{vid_name}.mp4"\n'
        'id = "qid"\nquestion = "q"\noptions = ["a0", "a1", "a2", "a3", "a4"]\n'
        'answer = "answer_idx"\n'
    )
    folder = make_bench(tmp_path / "tvqa", toml, rows, "tvqa_test_public.jsonl")
    out = run(folder, tmp_path, {"7": "B"})
    assert vidbench("predictions", out, "--out", tmp_path / "p.json") == 2
    assert "no row has a gold answer to show how the file writes its answers: give --format" in (
        " ".join(capsys.readouterr().err.split())
    )
    assert vidbench("predictions", out, "--out", tmp_path / "p.json", "--format", "index") == 0
    assert json.loads((tmp_path / "p.json").read_text()) == {"7": 1}


def test_open_ended_replies_and_other_runs(
    tmp_path: Path, qa_release: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = [{"question_id": "v_1", "video_name": "clip0", "question": "Colour?"}]
    toml = (
        'name = "anet"\nrows = "test_q.json"\nvideo = "videos/{video_name}.mp4"\n'
        'kind = "open-ended"\nid = "question_id"\nanswer = "answer"\n'
    )
    folder = make_bench(tmp_path / "anet", toml, rows, "test_q.json")
    out = run(folder, tmp_path, {"v_1": " red \n"})
    assert vidbench("predictions", out, "--out", tmp_path / "p.csv") == 0
    assert (tmp_path / "p.csv").read_text() == "question_id,answer\nv_1,red\n"

    other = tmp_path / "fourd"
    args = ["--data", qa_release, "--model", "random", "--out", other, "--limit", "2"]
    assert vidbench("run", "4dbench-qa", *args) == 0
    capsys.readouterr()
    assert vidbench("predictions", other, "--out", tmp_path / "x.json") == 2
    assert "writes a declared benchmark's answers" in capsys.readouterr().err.replace("\n", " ")
