"""The AutoEval-Video loader and `vidbench validate autoeval-video`: the real rules, time formats,
malformed rows, missing clips, and windows cut out of full-length videos by seeking."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from autoeval_support import rows, vidbench, write_jsonl
from conftest import AUTOEVAL, AUTOEVAL_CLIPS
from vidbench.benchmarks.autoeval_video import loader as av
from vidbench.core import records
from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.media.encode import write_mp4
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.media.spec import FrameSpec
from vidbench.registry import by_name
from vidbench.tasks.problems import Problem


def test_real_rules_load() -> None:
    loaded = av.load(AUTOEVAL)
    assert loaded.problems == [] and len(loaded.items) == 327
    assert [s.id for s in loaded.items] == [str(i) for i in range(1, 328)]
    first = loaded.items[0]
    assert first.kind == "open" and first.rules.count(av.MARKER) == 1
    assert first.metadata["dimension"] == "Dynamic Perception"
    assert (first.metadata["start_s"], first.metadata["end_s"]) == (73.0, 93.0)
    clips = [s for s in loaded.items if s.media.videos[0].is_file()]
    assert len(clips) == AUTOEVAL_CLIPS
    assert all(s.media.start_s is None for s in clips)  # already cut
    assert av.load(AUTOEVAL / av.RULES_FILE).items[5] == loaded.items[5]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0:01:13", 73.0), ("1:02:03", 3723.0), ("4:34", 274.0), ("42", 42.0), ("0:00:07.5", 7.5),
     (12, 12.0), (3.25, 3.25), (" 0:10:42 ", 642.0)],
)  # fmt: skip
def test_time_formats(text: object, seconds: float) -> None:
    assert av.parse_time(text) == seconds


@pytest.mark.parametrize("text", ["1:75", "0:01:60", "abc", "", "-3", -1, None, True, "1::2"])
def test_bad_times(text: object) -> None:
    with pytest.raises(DataError):
        av.parse_time(text)


def test_youtube_ids() -> None:
    assert av.youtube_id("https:\\/\\/www.youtube.com\\/watch?v=r6Aciv0zhoQ") == "r6Aciv0zhoQ"
    assert av.youtube_id("https://www.youtube.com/watch?v=abc&t=10s") == "abc"
    assert av.youtube_id("https://youtu.be/xyz?t=3") == "xyz"
    assert av.youtube_id("https://www.youtube.com/shorts/s1") == "s1"
    assert av.youtube_id("https://example.com/video.mp4") is None
    assert av.youtube_id(None) is None


def test_malformed_rows_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    good = rows()[:3]
    bad = [
        {**good[0], "ID": 10, "Rule": "a rule with no marker"},
        {**good[0], "ID": 11, "Dimension": "Humour"},
        {**good[0], "ID": 12, "Start time": "0:01:00", "End time": "0:00:50"},
        {**good[0], "ID": 13, "End time": "soon"},
        {"ID": 14, "Question": "q?"},
        {**good[0], "ID": "x"},
        {**good[0], "ID": 2},
        {**good[0], "ID": 15, "Question": ""},
        {**good[0], "ID": 16, "Rule": good[0]["Rule"] + "\n[Answer to be judged]:"},
    ]
    path = write_jsonl(tmp_path / av.RULES_FILE, [*good, *bad])
    with path.open("a") as f:
        f.write("{not json\n")
    loaded = av.load(tmp_path)
    assert [s.id for s in loaded.items] == ["1", "2", "3"]
    assert loaded.items[1].question == good[0]["Question"]  # ID 2's last copy
    messages = [str(p).rsplit(" [", 1)[0] for p in loaded.problems]
    assert messages == [  # in the file's order
        "10: line 4: the Rule has no '[Answer to be judged]:' marker (exactly one is needed to "
        "insert the answer)",
        "11: line 5: unknown Dimension 'Humour' (one of " + ", ".join(av.DIMENSIONS) + ")",
        "12: line 6: End time '0:00:50' is not after Start time '0:01:00'",
        "13: line 7: time 'soon': expected H:MM:SS, M:SS or seconds",
        "14: line 8: missing fields ['Rule', 'Dimension', 'Start time', 'End time']",
        "x: line 9: ID 'x' is not an integer",
        "2: line 10: duplicate ID (also line 2); the last is used, as a dict by ID keeps it",
        "15: line 11: 'Question' must be a non-empty string",
        "16: line 12: the Rule has 2 '[Answer to be judged]:' markers (exactly one is needed to "
        "insert the answer)",
        "line 13: malformed JSON: Expecting property name enclosed in double quotes",
    ]
    assert all(p.path == path for p in loaded.problems)


def _alive_samples() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Sample)


def test_a_streamed_rules_file_keeps_a_dicts_answer_and_holds_few_samples(tmp_path: Path) -> None:
    """3,000 rows, 600 of them copies of another row's ID (some copies broken): the stream gives
    what a dict by ID gives (each ID at its first good row's place, with its last good row) and
    names each later copy with the line before it; while it streams, only the samples of the
    repeated IDs are alive (plus the one handed out)."""
    rng = np.random.default_rng(5)
    template = rows()[0]
    lines, expected, lines_of = [], {}, {}
    for n in range(3000):
        number = int(rng.integers(1, 2400)) if n % 5 == 0 else 10_000 + n
        row = {**template, "ID": number, "Question": f"question {n}?"}
        if n % 97 == 0:
            row["Dimension"] = "Humour"  # a bad row: a problem, not a copy
        else:
            expected[str(number)] = row["Question"]  # a dict keeps the first place, last value
            lines_of.setdefault(str(number), []).append(n + 1)
        lines.append(row)
    path = write_jsonl(tmp_path / av.RULES_FILE, lines)
    repeated = sum(1 for where in lines_of.values() if len(where) > 1)
    before = _alive_samples()  # other tests' samples may still be alive in this process
    alive = []
    items = []
    for n, item in enumerate(av.iter_instances(tmp_path)):
        items.append((item.id, item.question) if isinstance(item, Sample) else item)
        if n % 500 == 0:
            alive.append(_alive_samples() - before)
    samples = [i for i in items if isinstance(i, tuple)]
    assert samples == list(expected.items())
    copies = [
        str(p).rsplit(" [", 1)[0] for p in items if isinstance(p, Problem) and "dupl" in str(p)
    ]
    later = sorted(
        (where[k], f"{key}: line {where[k]}: duplicate ID (also line {where[k - 1]}); the last is "
         "used, as a dict by ID keeps it")
        for key, where in lines_of.items()
        for k in range(1, len(where))
    )  # fmt: skip
    assert copies == [message for _, message in later]  # in the file's order
    assert max(alive) <= repeated + 1 and repeated > 50
    assert av.load(path).items == [i for i in av.iter_instances(path) if isinstance(i, Sample)]


def test_validate_lists_missing_clips_and_bad_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problems = by_name("autoeval-video").validate(AUTOEVAL, False, None)
    assert len(problems) == 327 - AUTOEVAL_CLIPS
    assert all(
        p.message.startswith("missing clip and no full-length video full/") for p in problems
    )
    assert str(problems[0]).startswith("1: missing clip and no full-length video full/r6Aciv0zhoQ")

    data = tmp_path / "data"
    (data / "video").mkdir(parents=True)
    write_jsonl(data / av.RULES_FILE, [*rows()[:2], {**rows()[2], "Dimension": "?"}])
    write_mp4(data / "video" / "1.mp4", [np.zeros((16, 16, 3), np.uint8)] * 8)
    (data / "video" / "2.mp4").write_bytes(b"not a video")
    assert vidbench("validate", "autoeval-video", data) == 1
    printed = capsys.readouterr().out
    assert "3: line 3: unknown Dimension '?'" in printed
    assert "2: clip is unreadable" in printed and "1:" not in printed.replace("line 3", "")


def test_window_cut_from_a_full_length_video(tmp_path: Path) -> None:
    """No clip, a full-length video: the Start..End window is cut by seeking, frames sampled in
    it (grey level = 4 * frame index, 10 fps, keyframe every 12 frames)."""
    full = tmp_path / "full" / "abcDEF12345.mp4"
    frames = [np.full((32, 48, 3), 4 * t, np.uint8) for t in range(60)]
    write_mp4(full, frames, fps=10)
    row = {**rows()[0], "ID": 7, "Video URL": "https://www.youtube.com/watch?v=abcDEF12345",
           "Start time": "0:00:02", "End time": "0:00:04"}  # fmt: skip
    write_jsonl(tmp_path / av.RULES_FILE, [row])
    [sample] = av.load(tmp_path).items
    assert sample.media.videos[0] == full
    assert (sample.media.start_s, sample.media.end_s) == (2.0, 4.0)
    spec = FrameSpec(views=(0,), frames=8, sampler="linspace", image_format="png")
    got = load_frames(sample.media, spec)
    want = [20 + int(i) for i in np.linspace(0, 19, 8, dtype=int)]  # frames 20..39
    assert [f.index for f in got] == want
    assert got[0].time_s == 0.0 and got[-1].time_s == pytest.approx(1.9)
    for frame, index in zip(got, want, strict=True):
        level = np.asarray(decode_image(frame.image.data)).astype(int)[16, 24, 0]
        assert abs(level - 4 * index) <= 3
    assert by_name("autoeval-video").validate(tmp_path, False, None) == []
    late = {**row, "Start time": "0:00:05", "End time": "0:01:00"}
    write_jsonl(tmp_path / av.RULES_FILE, [late])
    [problem] = by_name("autoeval-video").validate(tmp_path, False, None)
    assert "ends at" in problem.message and "before its window's end (60 s)" in problem.message


def test_ids_whose_hashes_collide_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ID with the same hash (as if all collided): the second pass sorts them out, and
    the load is the one real hashes give."""
    good = rows()[:3]
    path = write_jsonl(tmp_path / av.RULES_FILE, [*good, {**good[1], "Question": "again?"}])
    normal = av.load(path)
    monkeypatch.setattr(records, "_HASH_MASK", 0)
    assert av.load(path) == normal
    assert [(s.id, s.question) for s in normal.items] == [
        ("1", good[0]["Question"]),
        ("2", "again?"),
        ("3", good[2]["Question"]),
    ]
