"""`synth 4d --renderer blender` with real Blender (bpy), kept tiny (32 px, 12 frames, one
sample): the official layout with only the input views, knob fields per question, the dataset
card, byte-identical reruns, a new set for a new seed, resumption, a question whose evidence
Blender shows to be hidden dropped with its reason, the camera model against Blender's, and the
probe's model and figures on the rendered set."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from vidbench.benchmarks.fourd.curate.render import render_jobs
from vidbench.benchmarks.fourd.loader import load_qa
from vidbench.benchmarks.fourd.probe.build import WORKER_MODULE, build_probe
from vidbench.benchmarks.fourd.probe.camera import probe_ring, to_blender
from vidbench.benchmarks.fourd.probe.knobs import Knobs, ObjectKnobs
from vidbench.benchmarks.fourd.probe.plan import (
    PlannedObject,
    ProbeSettings,
    render_job,
    write_asset,
)
from vidbench.benchmarks.fourd.probe.questions import ProbeQuestion, counting_draft
from vidbench.benchmarks.fourd.probe.scenes import ProbeObject, probe_uid
from vidbench.benchmarks.fourd.probe.visibility import judge
from vidbench.benchmarks.fourd.synthetic.evidence import seen
from vidbench.benchmarks.fourd.synthetic.scene import Part, Scene
from vidbench.cli import main
from vidbench.media.decode import decode_frames, probe

pytest.importorskip("bpy")
pytestmark = pytest.mark.slow

QA = Path("4D_Object_Question_Answering/data")
TINY = ["--objects", "2", "--frames", "12", "--size", "32", "--samples", "1", "--occluders", "0,1"]


def _synth(out: Path, *extra: str) -> int:
    return main(
        ["--no-progress", "synth", "4d", "--renderer", "blender", "--out", str(out), *TINY, *extra]
    )


def _files(root: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


@pytest.fixture(scope="module")
def probe_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "a"
    assert _synth(out) == 0
    return out


def test_layout_fields_and_card(probe_set: Path) -> None:
    loaded = load_qa(probe_set)
    assert not loaded.problems and loaded.items
    knobs = Knobs(occluders=(0, 1))
    index_of = {probe_uid(0, i, knobs.of(i)): i for i in range(2)}
    for sample in loaded.items:
        fields = sample.metadata["probe"]
        assert fields["occluders"] == index_of[sample.metadata["uid"]] % 2
        assert (fields["parts"], fields["input_views"], fields["seed"]) == (6, 3, 0)
        assert 0 < fields["least_visible"] <= 1
        assert ("count" in fields) == (sample.metadata["subtask"] == "Object Counting")
    for uid in index_of:
        folder = probe_set / QA / "4d_object_multi_view_videos" / uid
        names = {p.name for p in folder.iterdir()}  # the input views only, no worker leftovers
        assert names == {"render.json", *(f"view_{v}_rgb_white_bg.mp4" for v in (1, 8, 16))}
        record = json.loads((folder / "render.json").read_text())
        assert record["blender"].startswith("5.0") and record["file"] == f"assets/{uid}.glb"
        counts = record["visibility"]["counts"]
        assert len(counts) == 3 and all(len(view) == 6 for view in counts)
        info = probe(folder / "view_1_rgb_white_bg.mp4")
        frames = decode_frames(folder / "view_1_rgb_white_bg.mp4", info, range(12))
        assert len(frames) == 12 and frames[0].shape == (32, 32, 3)
        assert frames[0][:3, :3].min() >= 250 and frames[0].min() < 200  # white around an object
    funnel = json.loads((probe_set / "funnel.json").read_text())["stages"]
    assert (funnel["render"]["entered"], funnel["render"]["kept"]) == (2, 2)
    assert funnel["questions"]["entered"] == 10
    visibility = funnel["visibility"]
    assert visibility["kept"] == len(loaded.items)
    assert visibility["kept"] + sum(visibility["dropped"].values()) == visibility["entered"]
    card = (probe_set / "README.md").read_text()
    assert "seed 0" in card and "Blender 5.0" in card and "| occluders | 0, 1 |" in card
    assert main(["--no-progress", "validate", "4dbench", str(probe_set)]) == 0


def test_same_seed_same_bytes_new_seed_new_set(probe_set: Path, tmp_path: Path) -> None:
    assert _synth(tmp_path / "b") == 0
    assert _files(tmp_path / "b") == _files(probe_set)
    assert _synth(tmp_path / "c", "--seed", "1") == 0
    old = set(json.loads((probe_set / QA / "4d_qa.json").read_text()))
    new = set(json.loads((tmp_path / "c" / QA / "4d_qa.json").read_text()))
    assert new and not {k.split("_")[0] for k in new} & {k.split("_")[0] for k in old}


def test_rerun_renders_nothing_again(probe_set: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.txt"
    script = tmp_path / "logging_worker.py"
    script.write_text(
        "import runpy, sys\n"
        f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
        f"runpy.run_module({WORKER_MODULE!r}, run_name='__main__')\n"
    )
    before = _files(probe_set)
    settings = ProbeSettings(
        objects=2, frames=12, size=32, samples=1, knobs=Knobs(occluders=(0, 1))
    )
    report = build_probe(probe_set, settings, False, [sys.executable, str(script)])
    assert not log.exists() and len(report.rendered) == 2
    assert _files(probe_set) == before


def test_a_question_whose_evidence_blender_hides_is_dropped(tmp_path: Path) -> None:
    """A red sphere inside a blue cube: counted, but no ray reaches it from any input view."""
    cameras = probe_ring("hidden", 0, 1.0)
    inside = Part("sphere", "red", (0.0, 0.0, 0.0), 0.3)
    cube = Part("cube", "blue", (0.0, 0.0, 0.0), 0.6)  # half side 0.51 > the sphere's 0.3
    outside = Part("sphere", "red", (1.0, 0.2, 0.3), 0.3)
    scene = Scene("hidden", (inside, cube, outside), first_view=cameras[1])
    obj = ProbeObject(
        0,
        ObjectKnobs(),
        scene,
        ("counted", "occluder", "counted"),
        ("red", "sphere"),
        tuple(cameras),
        (1, 8, 16),
    )
    draft = counting_draft(obj)
    assert draft.number == 2
    question = ProbeQuestion("hidden_object_counting", "Object Counting", {}, draft)
    planned = PlannedObject(obj, [question], {}, [])
    settings = ProbeSettings(objects=1, frames=12, size=32, samples=1)
    job = render_job(tmp_path, planned, settings, write_asset(tmp_path, planned, settings))
    report = render_jobs(
        [job], tmp_path / "videos", 1, False, [sys.executable, "-m", WORKER_MODULE]
    )
    assert report.rendered == ["hidden"], report.failed
    record = json.loads((tmp_path / "videos" / "hidden" / "render.json").read_text())
    counts = np.array(record["visibility"]["counts"])  # [view][frame][part][seen, silhouette]
    assert (counts[:, :, 0, 0] == 0).all() and (counts[:, :, 0, 1] > 0).all()
    assert (counts[:, :, 1, 0] > 0).all() and (counts[:, :, 2, 0] > 0).any()
    verdict = judge(draft.evidence, scene.parts, record["visibility"], 12)
    assert not verdict.kept and verdict.reason == "counted part not visible"
    assert judge((seen(outside, "counted part"),), scene.parts, record["visibility"], 12).kept


def test_camera_model_matches_blender() -> None:
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    from vidbench.benchmarks.fourd.curate import blender_scene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.resolution_x = scene.render.resolution_y = 64
    for camera in probe_ring("abc", 3, 1.5)[:4]:
        blender_scene.place_camera(camera.position)
        bpy.context.view_layer.update()
        for point in [(0.5, 0.3, -0.7), (1.2, -0.5, 0.4), (-0.9, 0.6, 0.9)]:
            u, v, distance = world_to_camera_view(scene, scene.camera, Vector(to_blender(point)))
            x, y, ahead = camera.ndc(point)
            assert ((x + 1) / 2, (y + 1) / 2, ahead) == pytest.approx((u, v, distance), abs=1e-6)


def test_colour_counter_and_knob_figures_on_the_rendered_set(
    probe_set: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    model = "python:vidbench.benchmarks.fourd.probe.model:ColourCounter"
    runs = []
    for name, spec in (("counter", model), ("random", "random")):
        out = tmp_path / name
        args = ["--no-progress", "run", "4dbench-qa", "--data", str(probe_set), "--model", spec]
        assert main([*args, "--out", str(out)]) == 0
        runs.append(out)
    rows = [json.loads(line) for line in (runs[0] / "samples.jsonl").open()]
    assert all(r["status"] == "ok" and r["parsed"] in "ABCD" for r in rows)
    assert {r["details"]["probe"]["occluders"] for r in rows} == {0, 1}
    assert main(["figures", *map(str, runs), "--out", str(tmp_path / "figures")]) == 0
    assert (tmp_path / "figures" / "knob-occluders.png").is_file()
