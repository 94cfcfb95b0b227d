"""Tests of the procedural 4D-Bench generator (benchmarks/fourd/synthetic) and write_mp4."""

from __future__ import annotations

import csv
import json
import os
import re
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pytest

from vidbench.benchmarks.fourd.synthetic import build_object, generate
from vidbench.benchmarks.fourd.synthetic import render as render_mod
from vidbench.benchmarks.fourd.synthetic.phrases import action_phrase
from vidbench.benchmarks.fourd.synthetic.q_appearance import appearance_question
from vidbench.benchmarks.fourd.synthetic.q_counting import counting_question
from vidbench.benchmarks.fourd.synthetic.q_spatial import relation_truth, spatial_question
from vidbench.benchmarks.fourd.synthetic.q_temporal import temporal_question
from vidbench.benchmarks.fourd.synthetic.questions import SUBTASKS, count_options, layout
from vidbench.benchmarks.fourd.synthetic.render import render
from vidbench.benchmarks.fourd.synthetic.sample import make_uid
from vidbench.benchmarks.fourd.synthetic.scene import (
    SLOTS,
    Behaviour,
    Part,
    Scene,
    check_visible,
    official_times,
)
from vidbench.cli import main
from vidbench.media.encode import write_mp4

QA = Path("4D_Object_Question_Answering/data")
CAP = Path("4D_Object_Captioning/data")
VIDEOS = "4d_object_multi_view_videos"
SMALL = {"objects": 3, "views": 3, "frames": 12, "size": 48, "workers": 1}


def decode(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def gold(entry: dict) -> str:
    return entry["Options"][entry["Answer index"] - 1][4:]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("s4d") / "release", seed=3, **SMALL)


# --- layout and file formats ---------------------------------------------------------------


def test_layout_and_symlink(dataset: Path) -> None:
    assert (dataset / QA / "4d_qa.json").is_file()
    assert (dataset / CAP / "human_annotations.csv").is_file()
    link = dataset / CAP / VIDEOS
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    assert link.resolve() == (dataset / QA / VIDEOS).resolve()
    uids = sorted(p.name for p in (dataset / QA / VIDEOS).iterdir())
    assert len(uids) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", u) for u in uids)
    for uid in uids:
        names = sorted(p.name for p in (link / uid).iterdir())
        assert names == sorted(f"view_{k}_rgb_white_bg.mp4" for k in range(3))


def test_qa_json_shape(dataset: Path) -> None:
    qa = json.loads((dataset / QA / "4d_qa.json").read_text())
    uids = {k.split("_")[0] for k in qa}
    assert len(uids) == 3 and len(qa) == 15
    for uid in uids:
        for suffix, category in SUBTASKS:
            entry = qa[f"{uid}_{suffix}"]
            assert list(entry) == ["Question", "Options", "Answer index", "Category"]
            assert entry["Category"] == category
            assert 1 <= entry["Answer index"] <= 4
            assert [o[:4] for o in entry["Options"]] == ["(A) ", "(B) ", "(C) ", "(D) "]
            assert len({o[4:].lower() for o in entry["Options"]}) == 4
            assert entry["Question"].strip()


def test_videos_decode_white_background(dataset: Path) -> None:
    uid = sorted((dataset / QA / VIDEOS).iterdir())[0]
    for view in range(3):
        path = uid / f"view_{view}_rgb_white_bg.mp4"
        with av.open(str(path)) as c:
            assert c.streams.video[0].frames == 12
        frames = decode(path)
        assert len(frames) == 12 and frames[0].shape == (48, 48, 3)
        corners = np.stack([f[[0, 0, -1, -1], [0, -1, 0, -1]] for f in frames])
        assert corners.min() >= 245  # white background
        assert min(f.min() for f in frames) < 200  # and something drawn on it


def test_captions_csv(dataset: Path) -> None:
    qa = json.loads((dataset / QA / "4d_qa.json").read_text())
    with open(dataset / CAP / "human_annotations.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["folder_name"] + [f"caption_{i}" for i in range(1, 6)]
    assert {r["folder_name"] for r in rows} == {k.split("_")[0] for k in qa}
    for r in rows:
        caps = [r[f"caption_{i}"] for i in range(1, 6)]
        assert len(set(caps)) == 5 and all(len(c) > 30 for c in caps)


def test_gold_letters_are_balanced_per_subtask() -> None:
    """Every four consecutive objects hold each letter once per subtask: `constant:X` scores
    25% in every column (the Action column once had A for 67 of 200)."""
    by_subtask: dict[str, Counter[int]] = {}
    for i in range(40):
        for entry in build_object(7, i)[1].values():
            by_subtask.setdefault(str(entry["Category"]), Counter())[entry["Answer index"]] += 1
    assert len(by_subtask) == 5
    assert all(counts == {1: 10, 2: 10, 3: 10, 4: 10} for counts in by_subtask.values())


def test_every_question_is_answerable_from_the_official_input() -> None:
    """The official input is views 1, 8, 16 and frames i * (48 // 6): view 1 is the camera the
    questions call the first video, and every event is shown before, during and after."""
    shown = official_times(48)
    assert render_mod.view_angle(1, 24) == 0.0  # view 1 looks from the front (+z)
    for t0, t1 in SLOTS:
        assert any(t <= t0 for t in shown) and any(t >= t1 for t in shown)
        assert any(t0 + (t1 - t0) / 4 < t < t1 for t in shown)  # after an instant change
    assert SLOTS[-1][1] < shown[-1]  # "at the end of the video" is what the last frame shows
    questions = [q for i in range(30) for q in build_object(3, i)[1].values()]
    texts = " ".join(f"{q['Question']} {q['Options']}" for q in questions)
    assert "front view" not in texts and "front camera" not in texts
    assert "first video" in texts
    check_visible(48)
    with pytest.raises(ValueError, match="use a multiple of 6"):
        check_visible(100)


def test_uids_deterministic() -> None:
    assert make_uid(0, 1) == make_uid(0, 1) != make_uid(1, 1)
    assert re.fullmatch(r"[0-9a-f]{32}", make_uid(5, 9))


# --- determinism ---------------------------------------------------------------------------


def test_same_seed_same_dataset(dataset: Path, tmp_path: Path) -> None:
    again = generate(tmp_path / "again", seed=3, **{**SMALL, "workers": 2})  # via the pool
    for rel in (QA / "4d_qa.json", CAP / "human_annotations.csv"):
        assert (dataset / rel).read_bytes() == (again / rel).read_bytes()
    uid = sorted((dataset / QA / VIDEOS).iterdir())[0].name
    video = Path(VIDEOS) / uid / "view_1_rgb_white_bg.mp4"
    a, b = decode(dataset / QA / video), decode(again / QA / video)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    other = generate(tmp_path / "other", seed=4, objects=2, views=1, frames=12, size=32, workers=1)
    assert (other / QA / "4d_qa.json").read_bytes() != (dataset / QA / "4d_qa.json").read_bytes()


# --- ground truth on hand-built scenes -----------------------------------------------------


def part(
    shape: str,
    colour: str,
    pos: tuple[float, float, float],
    kind: str = "still",
    slot: int | None = None,
    **kw: str,
) -> Part:
    return Part(shape, colour, pos, 0.3, Behaviour(kind, slot, **kw))


def test_counting_with_popping_parts() -> None:
    scene = Scene(
        "0" * 32,
        (
            part("cube", "red", (-1.0, 0.0, 0.0)),
            part("cube", "blue", (0.0, 0.0, 0.0), "disappear", 1),
            part("cube", "green", (1.0, 0.0, 0.0)),
            part("sphere", "yellow", (0.0, 0.8, 0.0), "appear", 2),
        ),
    )
    expected = [
        ("change their position", 0),
        ("cubes are there at the end", 2),
        ("cubes are there at the start", 3),
        ("spheres are there at the start", 0),
        ("spheres are there at the end", 1),
        ("cubes are there in total", 3),
        ("spheres are there in total", 1),
        ("present at the end", 3),
        ("present at the start", 3),
        ("in total", 4),
        ("separate shapes", 4),
    ]
    seen = set()
    for s in range(60):
        d = counting_question(scene, np.random.default_rng(s))
        key, n = next((k, n) for k, n in expected if k in d.question)
        assert d.number == n, d.question
        seen.add(key)
    assert len(seen) >= 6


def test_count_options_hold_answer() -> None:
    for n in range(6):
        for p in range(1, 5):
            opts = count_options(n, p)
            assert opts[p - 1] == n and len(set(opts)) == 4 and min(opts) >= 0


def test_left_right_relation() -> None:
    red, blue = part("sphere", "red", (-1.0, 0.0, 0.0)), part("cube", "blue", (1.0, 0.0, 0.0))
    truth = relation_truth(red, blue, np.array([0]))
    assert truth["left"] is True and truth["right"] is False
    assert truth["above"] is False and truth["front"] is False
    scene = Scene("1" * 32, (red, blue))
    for s in range(20):
        d = spatial_question(scene, np.random.default_rng(s))
        if "relative to the blue cube" in d.question:
            assert d.gold == "to the left of the blue cube"
        elif "relative to the red sphere" in d.question:
            assert d.gold == "to the right of the red sphere"
        elif "furthest to the left" in d.question:
            assert d.gold == "the red sphere"
        else:
            assert "furthest to the right" in d.question and d.gold == "the blue cube"
        assert d.gold not in d.distractors and len(d.distractors) == 3


def test_event_order() -> None:
    scene = Scene(
        "2" * 32,
        (
            part("sphere", "red", (-1.0, 0.0, 0.0), "jump", 0),
            part("cube", "blue", (0.0, 0.0, 0.5), "move", 2, direction="left"),
            part("cone", "green", (0.0, 0.0, -0.8)),
            part("cylinder", "yellow", (1.0, 0.0, 0.0), "shrink", 3),
        ),
    )
    sphere, cube, _, cyl = scene.parts
    first, last = "the red sphere jumps", "the yellow cylinder shrinks"
    seen = set()
    for s in range(40):
        d = temporal_question(scene, np.random.default_rng(s))
        q = d.question
        if q.startswith("Which of these happens first"):
            assert d.gold == first
        elif q.startswith("Which of these happens last"):
            assert d.gold == last
        elif q.startswith("In which order"):
            assert d.gold == f"{first}, then the blue cube moves to the left, then {last}"
        elif q.startswith("What happens next, right after the red sphere jumps"):
            assert d.gold == "the blue cube moves to the left"
        elif q.startswith("What happens next, right after the blue cube"):
            assert d.gold == last
        else:
            m = re.match(r"What does (the \w+ \w+) do (after|before) (the \w+ \w+)", q)
            assert m, q
            subject = {"the red sphere": sphere, "the blue cube": cube, "the yellow cylinder": cyl}[
                m[1]
            ]
            assert d.gold == action_phrase(subject.behaviour)
            order = {"the red sphere": 0, "the blue cube": 2, "the yellow cylinder": 3}
            assert (order[m[1]] > order[m[3]]) == (m[2] == "after")
        assert d.gold not in d.distractors
        seen.add(q.split()[2])
    assert len(seen) >= 4


def test_appearance_colour_and_shape() -> None:
    scene = Scene(
        "3" * 32,
        (
            part("cone", "green", (-1.0, 0.0, 0.0), "move", 0, direction="right"),
            part("sphere", "red", (1.0, 0.0, 0.0), "recolour", 2, new_colour="blue"),
        ),
    )
    for s in range(30):
        d = appearance_question(scene, np.random.default_rng(s))
        q = d.question
        if "at the end" in q:
            assert d.gold == "blue" and "red" in d.distractors
        elif "cone" in q or "moves to the right" in q:
            assert d.gold == "green"
        elif "green" in q:
            assert d.gold == "a cone"
        else:
            assert "red" in q and d.gold == "a sphere"


def test_layout_puts_gold_at_position() -> None:
    scene = Scene(
        "4" * 32, (part("cone", "green", (-1.0, 0.0, 0.0)), part("cube", "red", (1.0, 0.0, 0.0)))
    )
    d = spatial_question(scene, np.random.default_rng(0))
    for p in range(1, 5):
        opts = layout(d, p, np.random.default_rng(p))
        assert opts[p - 1][4:].lower() == d.gold.lower()


# --- rendering -----------------------------------------------------------------------------


def is_blue(img: np.ndarray) -> np.ndarray:
    return (img[..., 2].astype(int) - img[..., 0]) > 60


def is_red(img: np.ndarray) -> np.ndarray:
    return (img[..., 0].astype(int) - img[..., 2]) > 60


def test_occlusion_front_view_hides_far_part() -> None:
    """View 1, the first video of the official input, is the front camera."""
    near = Part("cube", "red", (0.0, 0.0, 0.8), 0.5)
    far = Part("sphere", "blue", (0.0, 0.0, -0.4), 0.25)
    scene = Scene("5" * 32, (far, near), occlusion=(1, 0))
    front = render(scene, 0.0, view=1, views=4, size=96)
    assert is_red(front[48, 48]) and not is_blue(front).any()
    side = render(scene, 0.0, view=2, views=4, size=96)
    assert is_red(side).sum() > 50 and is_blue(side).sum() > 50
    back = render(scene, 0.0, view=3, views=4, size=96)
    assert is_red(back).sum() > 50 and is_blue(back)[48, 48]  # now the sphere is in front
    for s in range(10):
        d = spatial_question(scene, np.random.default_rng(s))
        if "hidden behind" in d.question:
            assert d.gold == "the blue sphere"


def test_sampled_scenes_stay_in_frame() -> None:
    for i in range(6):
        scene = build_object(11, i)[0]
        for t in (0.0, 0.3, 0.6, 1.0):
            for view in range(0, 24, 4):
                img = render(scene, t, view, 24, 48)
                border = np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]])
                assert (border == 255).all()


# --- write_mp4 -----------------------------------------------------------------------------


def test_write_mp4_odd_size_and_count(tmp_path: Path) -> None:
    frames = [np.full((33, 47, 3), (10 * i, 100, 200), np.uint8) for i in range(5)]
    path = tmp_path / "odd.mp4"
    write_mp4(path, iter(frames), fps=10)
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        assert s.frames == 5 and (s.width, s.height) == (48, 34)
        assert s.codec_context.name == "h264" and s.codec_context.pix_fmt == "yuv420p"
    out = decode(path)
    assert len(out) == 5 and abs(int(out[3][10, 10, 0]) - 30) <= 6


def test_write_mp4_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no frames"):
        write_mp4(tmp_path / "empty.mp4", [])
    with pytest.raises(ValueError, match="uint8"):
        write_mp4(tmp_path / "bad.mp4", [np.zeros((8, 8, 3), np.float32)])
    assert not (tmp_path / "empty.mp4").exists() and not (tmp_path / "bad.mp4").exists()


def test_a_dataset_with_fewer_views_than_the_tasks_read_is_named_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`synth 4d --views 16` renders views 0-15 while the 4D-Bench tasks read 1, 8 and 16: synth
    warns, validate and run say so once, up front, and --views makes it usable."""
    data = str(tmp_path / "sixteen")
    synth = ["--no-progress", "synth", "4d", "--out", data, "--objects", "1", "--views", "16"]
    assert main([*synth, "--frames", "12", "--size", "32"]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert (
        "warning: --views 16 renders views 0-15, and 4dbench-qa and 4dbench-caption read " in said
    )
    assert "views 1, 8, 16: run them on this dataset with --views among 0-15" in said
    assert "wrote a 4D-Bench-layout dataset of 1 object to" in said
    assert main(["--no-progress", "validate", "4dbench", data]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("no object has view 16 (view_16_rgb_white_bg.mp4), which 4dbench-qa")
    run = ["--no-progress", "run", "4dbench-qa", "--data", data, "--model", "random"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main([*run, "--out", str(tmp_path / "run"), *cache]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert (
        "none of the 5 samples has a video for view 16, and 4dbench-qa reads views 1, 8, 16 "
        in said
    )
    assert "has views 0-15); choose views the data has with --views" in said
    assert not (tmp_path / "run" / "store.sqlite").exists()  # stopped before any model call
    assert main([*run, "--out", str(tmp_path / "run"), *cache, "--views", "0,5,10"]) == 0


def test_generating_again_into_the_same_folder_leaves_nothing_stale(tmp_path: Path) -> None:
    """Fewer views: the old runs' further views go (a task reading view 16 read the old
    render); fewer objects: the folder's extra objects are named and nothing is written (a
    folder listing, `curate 4d qa`, would find objects 4d_qa.json does not have)."""
    small = {"frames": 12, "size": 16}
    out = generate(tmp_path / "d", objects=2, views=4, **small)
    videos = out / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos"
    generate(tmp_path / "d", objects=2, views=2, **small)
    assert {len(list(folder.iterdir())) for folder in videos.iterdir()} == {2}
    with pytest.raises(ValueError, match="holds 1 object folder"):
        generate(tmp_path / "d", objects=1, views=2, **small)
    assert main(["--no-progress", "synth", "4d", "--out", str(tmp_path / "d"), "--objects", "1",
                 "--views", "2", "--frames", "12", "--size", "16"]) == 2  # fmt: skip
