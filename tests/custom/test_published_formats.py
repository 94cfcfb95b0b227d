"""Video-MME's and MVBench's published rows, run as declared benchmarks: their benchmark.toml
(docs/custom-gallery.md) reads the files as published, builds the official prompts, and
scores as their evaluation code does."""

from __future__ import annotations

from pathlib import Path

import pytest
from published_formats import VIDEOMME_README_PROMPT, write_mvbench, write_videomme

from custom_support import predictions, results, samples, vidbench
from vidbench.core.messages import TextPart
from vidbench.registry import get_task
from vidbench.tasks.data import load_samples


@pytest.fixture(scope="module")
def videomme(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_videomme(tmp_path_factory.mktemp("videomme"))


@pytest.fixture(scope="module")
def mvbench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mvbench(tmp_path_factory.mktemp("mvbench"))


def test_videomme_rows_and_the_readme_prompt(videomme: Path) -> None:
    assert vidbench("validate", "custom", videomme) == 0
    task = get_task(f"custom:{videomme}")
    loaded = load_samples(task, videomme)
    assert loaded.problems == []
    first = {s.id: s for s in loaded.items}["001-1"]
    assert first.options == ("Black.", "Gray.", "Green.", "Brown.") and first.answer == "A"
    assert first.media.videos == {0: videomme / "data" / "fFjv93ACGo8.mp4"}
    [message] = task.build_messages(first, [])
    assert message.content == (TextPart(VIDEOMME_README_PROMPT),)


REPLIES = {
    "001-1": "A",  # gold A
    "001-2": "The best answer is B.",  # gold B
    "001-3": "I am not able to tell anything from these frames, the video is too dark.",
    "002-1": "A man holds the ball; the answer is D",  # gold D, but the script reads "A"
    "002-2": "(A)",  # gold A
    "002-3": "C",  # gold B
}


def test_videomme_scores_as_its_evaluation_script(videomme: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = predictions(tmp_path / "replies.jsonl", REPLIES)
    assert vidbench("run", f"custom:{videomme}", "--model", model, "--out", out) == 0
    found = results(out)
    # the unreadable reply is left out of every denominator, as the script's "answered" count
    assert found["unparsed"] == 1 and found["scoring"]["not_counted"] == 1
    assert found["columns"] == {
        "Overall": 60.0,
        "duration: medium": pytest.approx(100 / 3),
        "duration: short": 100.0,
        "domain: Knowledge": 100.0,
        "domain: Sports Competition": pytest.approx(100 / 3),
        "task_type: Attribute Perception": 75.0,
        "task_type: Counting Problem": 0.0,
    }
    assert found["column_groups"]["duration"] == ["duration: medium", "duration: short"]
    assert samples(out)["002-1"]["parsed"] == "A"
    assert samples(out)["001-1"]["groups"]["duration"] == "short"

    # another parser re-scores the stored answers: no model call
    assert vidbench("run", f"custom:{videomme}:option-text", "--out", out, "--stage", "score") == 0
    assert vidbench("run", f"custom:{videomme}:option-text", "--out", out, "--stage", "report") == 0
    rescored = results(out)
    assert rescored["scoring"]["parser"] == "option-text" and rescored["task"].endswith(
        ":option-text"
    )
    # "A man holds the ball; the answer is D": option-text finds the label after "answer is"
    assert samples(out)["002-1"]["parsed"] == "D"


def test_mvbench_rows_windows_and_prompt(mvbench: Path, tmp_path: Path) -> None:
    assert vidbench("validate", "custom", mvbench) == 0
    task = get_task(f"custom:{mvbench}")
    loaded = {s.id: s for s in load_samples(task, mvbench).items}
    assert sorted(loaded) == ["action_count-1", "action_sequence-1", "action_sequence-2"]
    first = loaded["action_sequence-1"]
    assert first.answer == "C" and (first.media.start_s, first.media.end_s) == (0.5, 1.5)
    assert loaded["action_count-1"].answer == "B"  # the candidate "2", not the index 2
    assert loaded["action_count-1"].media.start_s is None
    assert first.media.videos == {0: mvbench / "video/star/Charades_v1_480/ZS9XR.mp4"}
    system, user = task.build_messages(first, [])
    assert system.role == "system" and system.text.startswith("Carefully watch the video")
    assert user.text == (
        "Question: What happened after the person took the food?\nOptions:\n"
        "(A) Ate the medicine.\n(B) Tidied up the blanket.\n(C) Put down the cup/glass/bottle.\n"
        "(D) Took the box.\nOnly give the best option."
    )

    out = tmp_path / "run"  # a model that sees frames: each window is decoded
    assert vidbench("run", f"custom:{mvbench}", "--model", "random", "--out", out) == 0
    found = results(out)
    assert found["n"] == 3 and found["errors"] == 0
    assert set(found["columns"]) == {"Overall", "Action Count", "Action Sequence"}
    assert found["column_n"] == {"Overall": 3, "Action Count": 1, "Action Sequence": 2}
