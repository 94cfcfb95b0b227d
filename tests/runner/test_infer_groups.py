"""The infer stage prepares the questions of one clip together and keeps both cores on different
clips: each clip's frames are loaded once for all its questions, and two clips decode at once."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from conftest import AUTOEVAL, make_qa_dataset, random_qa_run, solid_frames
from vidbench.core.records import MediaRef, Sample
from vidbench.media import frames as frames_module
from vidbench.media.encode import write_mp4
from vidbench.runner import infer as infer_module
from vidbench.runner.infer import same_frames
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.testing import ChatServer

OBJECTS = 4
READ_VIEWS = (1, 8, 16)  # the views 4dbench-qa shows


def sample(sample_id: str, video: str, start_s: float | None = None) -> Sample:
    return Sample(sample_id, "bench", "mcq", MediaRef.single(Path(video), start_s))


def test_samples_with_the_same_media_are_one_group_in_order_of_their_first() -> None:
    samples = [
        sample("a1", "a.mp4"),
        sample("b1", "b.mp4"),
        sample("a2", "a.mp4"),
        sample("a-late", "a.mp4", start_s=2.0),  # another window of the clip: other frames
        sample("b2", "b.mp4"),
    ]
    groups = list(same_frames(samples, needs_frames=True))
    assert [[s.id for s in g] for g in groups] == [["a1", "a2"], ["b1", "b2"], ["a-late"]]
    # a model that reads no frames: nothing to share, each sample is ready at once
    alone = list(same_frames(samples, needs_frames=False))
    assert [[s.id for s in g] for g in alone] == [[s.id] for s in samples]


def test_groups_are_found_within_a_window_of_consecutive_samples() -> None:
    """A run holds a window of samples, not all: a clip's questions further apart than the
    window are two groups (the second reads the frames the first put in the frame cache)."""
    samples = [sample("a1", "a.mp4"), sample("b1", "b.mp4"), sample("a2", "a.mp4")]
    samples += [sample("c1", "c.mp4"), sample("a3", "a.mp4")]
    groups = list(same_frames(iter(samples), needs_frames=True, window=3))
    assert [[s.id for s in g] for g in groups] == [["a1", "a2"], ["b1"], ["c1"], ["a3"]]


@pytest.mark.parametrize("window", [infer_module.GROUP_WINDOW, 3])
def test_a_run_loads_each_clip_once_for_its_questions_and_decodes_two_clips_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """Also with a window (3) that cuts an object's five questions in two groups: the second
    group's frames come from the frame cache, each clip is still decoded once."""
    data = make_qa_dataset(tmp_path / "data", n_objects=OBJECTS)
    views = data / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos"
    for i, uid in enumerate(sorted(p.name for p in views.iterdir())):
        for k in READ_VIEWS:  # every object its own videos (the fixture repeats them)
            write_mp4(
                views / uid / f"view_{k}_rgb_white_bg.mp4", solid_frames(12, seed=100 * i + k)
            )

    lock = threading.Condition()
    decodes: Counter[str] = Counter()
    active, most_active = 0, 0
    loads: list[str] = []
    decode, load = frames_module.decode_frames, infer_module.sample_frames

    def slow_decode(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal active, most_active
        with lock:
            decodes[f"{path.parent.name}/{path.name}"] += 1
            active += 1
            most_active = max(most_active, active)
            lock.notify_all()
            # until the other thread starts its own clip meanwhile (a fixed sleep let a busy
            # machine's second thread start late: 1 seen at once), once; a run that decodes
            # one clip at a time waits out each second and fails below
            lock.wait_for(lambda: most_active >= 2, timeout=1.0)
        try:
            return decode(path, *args, **kwargs)
        finally:
            with lock:
                active -= 1

    def counted_load(task, sample, *args, **kwargs):  # type: ignore[no-untyped-def]
        loads.append(sample.id)
        return load(task, sample, *args, **kwargs)

    monkeypatch.setattr(frames_module, "decode_frames", slow_decode)
    monkeypatch.setattr(infer_module, "sample_frames", counted_load)
    monkeypatch.setattr(infer_module, "preparing_threads", lambda: 2)  # a 2-core machine
    monkeypatch.setattr(infer_module, "GROUP_WINDOW", window)
    stats = random_qa_run(data, tmp_path).infer()

    assert stats.answered == OBJECTS * 5
    if window > 5:
        assert len(loads) == OBJECTS  # one frame load per object, not one per question
    else:
        assert OBJECTS < len(loads) < OBJECTS * 5
    assert len(decodes) == OBJECTS * len(READ_VIEWS) and set(decodes.values()) == {1}
    assert most_active == 2  # both threads decoding, each its own object's clip


def test_a_rerun_of_a_grid_task_asks_nothing(tmp_path: Path) -> None:
    """A grid image's request key is known only once the grid is made (its labels cannot tell):
    a rerun decodes those, checks each key in the store and asks the model nothing."""
    with ChatServer() as server:  # open-ended questions: a chat model answers them
        config = RunConfig(
            task="autoeval-video:grid-2x4",
            data=str(AUTOEVAL),
            model=f"openai-compat:{server.base_url}#fake-model",
            out=str(tmp_path / "out"),
            cache_dir=str(tmp_path / "cache"),
            frames={"max_side": 64},
            progress=False,
        )
        run = Run(config)
        with_clips = sum(1 for s in run.samples if s.media.videos[0].is_file())  # others: media
        first = run.infer()
        assert first.answered == with_clips > 0
        asked = server.stats().received
        again = Run(config).infer()
        assert (again.answered, again.reused) == (0, with_clips)
        assert server.stats().received == asked
