"""MMWorld prompts: the official open-model and GPT-4o prompts, subtitles, image order."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmworld_support import README_RECORD, make_mmworld, records
from vidbench.core.messages import ImagePart, TextPart
from vidbench.media.frame import Frame
from vidbench.registry import get_task


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = records()
    data[0]["transcript"] = "The coach says: keep your elbows in."
    return make_mmworld(tmp_path_factory.mktemp("mmworld_prompts"), data)


FRAMES = [Frame(0, i, i / 10, ImagePart(bytes([i]), label=f"view 0, frame {i}")) for i in range(3)]


def _sample(task_name: str, dataset: Path, sample_id: str):
    task = get_task(task_name)
    return task, next(s for s in task.load(dataset).items if s.id == sample_id)


def test_open_prompt_is_the_scripts_f_string(dataset: Path) -> None:
    task, sample = _sample("mmworld", dataset, "eng_vid1#0")
    [message] = task.build_messages(sample, FRAMES)
    q = README_RECORD["questions"][0]
    assert message.role == "user"
    assert list(message.images) == [f.image for f in FRAMES]  # frames first
    assert isinstance(message.content[-1], TextPart)
    assert message.text == (
        f"Answer the question {q['question']} by selecting one from the giving answers "
        f"{q['options']}. Respond with only single letter such as a, b, c ,d."
    )
    assert "{'a': 'The reason might be" in message.text


def test_api_prompt_and_subtitles(dataset: Path) -> None:
    task, sample = _sample("mmworld:api-prompt+subtitles", dataset, "vid0#0")
    system, user = task.build_messages(sample, FRAMES)
    assert system.role == "system" and system.text.endswith("End your response with {END}.")
    assert isinstance(user.content[0], TextPart) and list(user.images) == [f.image for f in FRAMES]
    assert user.text.startswith(
        "Subtitles of the video:\nThe coach says: keep your elbows in.\n\nBased on the following "
        "video frames extracted from the video, answer the question [q0]"
    )
    # no transcript, no subtitles; and without the modifier none either
    _, other = _sample("mmworld:subtitles", dataset, "vid1#0")
    assert "Subtitles" not in task.build_messages(other, FRAMES)[1].text
    plain, same = _sample("mmworld", dataset, "vid0#0")
    assert "Subtitles" not in plain.build_messages(same, FRAMES)[0].text
