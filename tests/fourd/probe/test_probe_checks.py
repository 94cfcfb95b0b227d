"""The probe's parts that need no Blender: the visibility rule on measured counts, knob fields
carried from probe.jsonl to samples.jsonl (never into the prompt), the colour-counting model,
and the knob figures of `vidbench figures`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from vidbench.benchmarks.fourd.loader import PROBE_FILE, load_qa
from vidbench.benchmarks.fourd.probe.model import ColourCounter, answer, count_blobs
from vidbench.benchmarks.fourd.probe.visibility import judge, share
from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.benchmarks.fourd.synthetic.evidence import END, START, Evidence, event
from vidbench.benchmarks.fourd.synthetic.scene import COLOURS, Behaviour, Part
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.core.messages import ImagePart, user
from vidbench.core.requests import Request

FRAMES = 48
INPUT_FRAMES = [0, 8, 16, 24, 32, 40]
A = Part("cube", "red", (0.0, 0.0, 0.0), 0.3)
B = Part("sphere", "blue", (1.0, 0.0, 0.0), 0.3, Behaviour("jump", 1))
TWIN = Part("cube", "red", (0.0, 0.0, 0.0), 0.3)  # equal to A, a part of its own


def _visibility(counts_by_view: list[list[list[list[int]]]]) -> dict:
    return {"grid": 32, "views": [1, 8, 16], "frames": INPUT_FRAMES, "counts": counts_by_view}


def _all(seen_a, sil_a, seen_b=20, sil_b=20, twin=(20, 20)):
    frame = [[seen_a, sil_a], [seen_b, sil_b], list(twin)]
    return [[frame for _ in INPUT_FRAMES] for _ in range(3)]


def test_visibility_rule_keeps_what_is_seen_and_names_what_is_not() -> None:
    parts = (A, B, TWIN)
    assert share(2, 4) == 0.0 and share(5, 40) == 0.0 and share(10, 40) == 0.25
    kept = judge(
        [Evidence(A, (0.0, 1.0), "counted part")], parts, _visibility(_all(12, 20)), FRAMES
    )
    assert kept.kept and kept.least_visible == 0.6
    hidden = judge(
        [Evidence(A, (0.0, 1.0), "counted part")], parts, _visibility(_all(0, 20)), FRAMES
    )
    assert not hidden.kept and hidden.reason == "counted part not visible"
    # identical parts are told apart by identity: TWIN is visible, A is not
    twin = judge(
        [Evidence(TWIN, (0.0, 1.0), "counted part")], parts, _visibility(_all(0, 20)), FRAMES
    )
    assert twin.kept
    # visible only in the second view: enough for any view, not for "the first video"
    counts = _all(0, 20)
    counts[1] = [[[15, 20], [20, 20], [20, 20]] for _ in INPUT_FRAMES]
    anywhere = Evidence(A, START, "pair")
    first = Evidence(A, START, "pair", first_view=True)
    assert judge([anywhere], parts, _visibility(counts), FRAMES).kept
    verdict = judge([first], parts, _visibility(counts), FRAMES)
    assert verdict.reason == "pair not visible in the first input view"
    # seen only at the start, asked about the end
    counts = [[[[15, 20], [20, 20], [20, 20]]] + [[[0, 20], [20, 20], [20, 20]]] * 5] * 3
    assert judge([Evidence(A, START, "subject")], parts, _visibility(counts), FRAMES).kept
    assert not judge([Evidence(A, END, "subject")], parts, _visibility(counts), FRAMES).kept
    # a jump seen before it but hidden in the frame at its top
    counts = _all(20, 20)
    for view in counts:
        view[2] = [[20, 20], [0, 20], [20, 20]]  # frame 16: the top of B's jump (slot 1)
    verdict = judge(event(B, "event"), parts, _visibility(counts), FRAMES)
    assert verdict.reason == "event not visible"
    # with 12 frames no input frame falls in the middle of a jump in the last slot
    late = Part("sphere", "blue", (1.0, 0.0, 0.0), 0.3, Behaviour("jump", 3))
    twelve = {**_visibility(_all(20, 20)), "frames": [0, 2, 4, 6, 8, 10]}
    short = judge(event(late, "event"), (A, late, TWIN), twelve, 12)
    assert short.reason == "event: no input frame at that moment"


def test_probe_fields_reach_samples_but_not_the_prompt(tmp_path: Path) -> None:
    root = generate(tmp_path / "data", objects=2, views=24, frames=12, size=16, workers=1)
    data = root / "4D_Object_Question_Answering" / "data"
    keys = list(json.loads((data / "4d_qa.json").read_text()))
    lines = [
        json.dumps({"id": key, "probe": {"occluders": i % 2, "count": i}})
        for i, key in enumerate(keys)
    ]
    (data / PROBE_FILE).write_text("\n".join([*lines[:-1], "{not json", '{"id": 3}']) + "\n")
    loaded = load_qa(root)
    problems = sorted((p.record, p.message) for p in loaded.problems)
    assert [r for r, _ in problems] == [f"line {len(keys)}", f"line {len(keys) + 1}"]
    assert "malformed JSON" in problems[0][1] and '"probe"' in problems[1][1]
    by_id = {s.id: s for s in loaded.items}
    assert by_id[keys[1]].metadata["probe"] == {"occluders": 1, "count": 1}
    assert "probe" not in by_id[keys[-1]].metadata
    assert "occluders" not in by_id[keys[1]].metadata["official_qa_text"]

    out = tmp_path / "run"
    args = ["--no-progress", "run", "4dbench-qa", "--data", str(root), "--model", "random"]
    # the two bad probe lines are data problems of the run: its results say so, and its exit code
    assert main([*args, "--out", str(out)]) == EXIT_INCOMPLETE
    rows = {json.loads(line)["id"]: json.loads(line) for line in (out / "samples.jsonl").open()}
    assert rows[keys[1]]["details"]["probe"] == {"occluders": 1, "count": 1}
    assert "probe" not in rows[keys[-1]].get("details", {})
    assert rows[f"line {len(keys)}"]["status"] == "data"  # the bad line is named, not lost


def _image(blobs: list[tuple[str, tuple[int, int], int]], size: int = 96) -> np.ndarray:
    img = Image.new("RGB", (size, size), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for colour, (x, y), r in blobs:
        rgb = COLOURS[colour]
        draw.ellipse((x - r, y - r, x + r, y + r), fill=rgb)
        shade = tuple(int(c * 0.6) for c in rgb)  # a shadowed half, as the renderer makes
        draw.pieslice((x - r, y - r, x + r, y + r), 0, 180, fill=shade)
    return np.asarray(img)


def test_colour_counter_counts_blobs_of_the_asked_colour() -> None:
    one = _image([("red", (20, 20), 8), ("blue", (60, 20), 8), ("red", (20, 70), 8)])
    other = _image([("red", (20, 20), 8), ("red", (50, 50), 8), ("red", (80, 80), 8)])
    touching = _image([("red", (40, 40), 9), ("red", (56, 40), 9)])
    assert count_blobs(one, "red") == 2 and count_blobs(one, "blue") == 1
    assert count_blobs(one, "green") == 0 and count_blobs(touching, "red") == 1
    text = "Here is the question and choices: {'Question': 'How many red cubes are there in total?"
    text += " ...', 'Options': ['(A) 1', '(B) 2', '(C) 3', '(D) 4']}"
    assert answer([one], text) == "B" and answer([one, other], text) == "C"
    assert answer([one], "What colour is the cone? (A) 1") is None

    images = []
    for array in (one, other):
        import io

        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, format="JPEG", quality=95)
        images.append(ImagePart(buffer.getvalue()))
    import asyncio

    requests = [
        Request("k1", "u_object_counting", (user(*images, text),), choices=("A", "B", "C", "D")),
        Request("k2", "u_appearance", (user(*images, "What colour?"),), choices=("A", "B")),
    ]
    replies = asyncio.run(ColourCounter().generate(requests))
    assert replies[0].text == "(C)" and replies[1].text in ("(A)", "(B)")
    assert asyncio.run(ColourCounter().generate(requests[1:]))[0].text == replies[1].text


@pytest.mark.slow
def test_vidbench_figures_draws_each_swept_knob(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    root = generate(tmp_path / "data", objects=8, views=24, frames=12, size=16, workers=1)
    data = root / "4D_Object_Question_Answering" / "data"
    keys = list(json.loads((data / "4d_qa.json").read_text()))
    fields = {k: {"occluders": i % 3, "parts": 6, "seed": 0} for i, k in enumerate(keys)}
    (data / PROBE_FILE).write_text(
        "".join(json.dumps({"id": k, "probe": v}) + "\n" for k, v in fields.items())
    )
    runs = []
    for model in ("random", "constant:(A)"):
        out = tmp_path / model.replace(":", "-").strip("()")
        run = ["--no-progress", "run", "4dbench-qa:views-1", "--data", str(root)]
        assert main([*run, "--model", model, "--out", str(out)]) == 0
        runs.append(out)
    figures = tmp_path / "figures"
    assert main(["figures", *map(str, runs), "--out", str(figures)]) == 0
    assert "knob-occluders.png" in capsys.readouterr().err.replace("\n", "")
    assert (figures / "knob-occluders.png").stat().st_size > 0
    assert (figures / "knob-occluders.svg").is_file() and (figures / "bars-1.png").is_file()
    assert not (figures / "knob-parts.png").exists()  # one value: not a sweep
    table = list(csv.DictReader((figures / "knob-occluders.csv").open()))
    rows = [json.loads(line) for line in (runs[1] / "samples.jsonl").open()]
    for value in (0, 1, 2):
        mine = [
            r["outcome"]["kind"] == "correct"
            for r in rows
            if r["details"]["probe"]["occluders"] == value
        ]
        (row,) = [
            t
            for t in table
            if t["model"] == "constant:(A)"
            and t["subtask"] == "All questions"
            and float(t["occluders"]) == value
        ]
        assert int(row["questions"]) == len(mine)
        assert float(row["accuracy"]) == pytest.approx(100 * sum(mine) / len(mine), abs=0.01)
        assert float(row["low"]) <= float(row["accuracy"]) <= float(row["high"])


def test_synth_options_that_cannot_apply_are_refused(tmp_path: Path, capsys) -> None:
    def error() -> str:
        return " ".join(capsys.readouterr().err.split())  # the console wraps long lines

    base = ["--no-progress", "synth", "4d", "--out", str(tmp_path / "x"), "--objects", "1"]
    assert main([*base, "--occluders", "1"]) == 2
    assert "--occluders need --renderer blender" in error()
    assert main([*base, "--renderer", "blender", "--views", "5"]) == 2
    assert "or all 24 with --views 24; got --views 5" in error()
    assert main([*base, "--renderer", "blender", "--parts", "3", "--lookalikes", "3"]) == 2
    assert "--parts 3 leaves no room for a counted part" in error()
    assets = ["--no-progress", "synth", "4d", "--assets", str(tmp_path / "x"), "--objects", "1"]
    assert main([*assets, "--lookalikes", "2"]) == 2
    assert "--lookalikes need --renderer blender" in error()
    assert main([*assets, "--renderer", "blender"]) == 2
    assert "--assets writes the procedural scenes" in error()
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):
        main([*base, "--renderer", "blender", "--occluders", "1,x"])
