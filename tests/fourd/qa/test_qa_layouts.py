"""`curate 4d qa` on the output folder of `curate 4d render` (part 1): objects part 1 dropped
and objects with an unreadable view are recorded and skipped; the rest become questions that
`run 4dbench-qa` reads. Also `curate 4d captions` on the same folder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from qa_support import (
    OBJ0,
    OBJ1,
    OBJ2,
    R_BROKEN,
    R_GOOD,
    R_TEXTURELESS,
    generic,
    rendered_folder,
    write_objects,
)

from conftest import solid_frames
from vidbench.benchmarks.fourd.curate.qa.objects import list_objects
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.cli import main
from vidbench.core.files import read_jsonl
from vidbench.media.encode import write_mp4
from vidbench.report.funnel import Funnel, funnel_markdown
from vidbench.testing import ChatServer


def test_rendered_layout(tmp_path: Path, shared_server: ChatServer) -> None:
    folder = rendered_folder(tmp_path / "render")
    shared_server.reset(reply=generic)
    url = shared_server.base_url
    out = tmp_path / "out"
    argv = ["--no-progress", "curate", "4d", "qa", "--data", str(folder), "--out", str(out)]
    argv += ["--generator", f"openai-compat:{url}#g", "--validator", f"openai-compat:{url}#v"]
    argv += ["--blind", f"openai-compat:{url}#b1", "--blind", f"openai-compat:{url}#b2"]
    argv += ["--views", "0,8", "--frames", "3", "--cache-dir", str(tmp_path / "frames")]
    assert main(argv) == 0
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["details"]["objects"] == {
        "layout": "rendered",
        "found": 4,
        "used": 1,
        "skipped": {"render dropped": 1, "quality: textureless": 1, "unreadable video": 1},
    }
    # the table (`curate 4d funnel`) shows the skipped objects, not only the details
    objects = Funnel.read(out).stages["qa objects"]
    assert (objects.unit, objects.entered, objects.kept) == ("objects", 4, 1)
    assert objects.dropped == funnel["details"]["objects"]["skipped"]
    assert "quality: textureless 1" in funnel_markdown(Funnel.read(out))
    broken = next(p for p in funnel["problems"] if p.get("uid") == R_BROKEN)
    assert "view_8_rgb_white_bg.mp4" in broken["detail"]
    assert funnel["details"]["total"]["kept"] == 5
    settings = json.loads((out / "settings.json").read_text())
    assert settings["frame_spec"]["views"] == [0, 8] and settings["frame_spec"]["frames"] == 3
    qa = json.loads((out / "4d_qa.json").read_text())
    assert sorted(qa) == sorted(
        f"{R_GOOD}_{s}"
        for s in (
            "object_counting",
            "temporal_relationship",
            "motion",
            "spatial_relationship",
            "appearance",
        )
    )
    run = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(out), "--model", "constant:A"]
    assert main([*argv, "--out", str(run), "--cache-dir", str(tmp_path / "frames")]) == 0
    results = json.loads((run / "results.json").read_text())
    assert results["n"] == 5 and results["errors"] == 0

    drafts_out = tmp_path / "drafts"
    argv = ["--no-progress", "curate", "4d", "captions", "--data", str(folder)]
    argv += ["--out", str(drafts_out), "--model", f"openai-compat:{url}#c", "--frames", "2"]
    assert main([*argv, "--cache-dir", str(tmp_path / "frames")]) == 0
    drafts = read_jsonl(drafts_out / "caption_drafts.jsonl")
    assert [d["uid"] for d in drafts] == [R_GOOD]
    assert drafts[0]["machine_draft"] is True
    assert drafts[0]["caption"] == "A small cube that turns slowly."
    shared_server.reset(reply=generic)
    assert main([*argv, "--cache-dir", str(tmp_path / "frames")]) == 0
    assert shared_server.requests == []  # drafted once, read from the store after

    # a review project on the output: the queue's candidates (with provenance), the drafts
    project = tmp_path / "project"
    assert main(["annotate", "init", str(project), "--data", str(out)]) == 0
    drafts_file = str(drafts_out / "caption_drafts.jsonl")
    assert main(["annotate", "import", str(project), "drafts", drafts_file]) == 0
    with sqlite3.connect(project / "annotate.sqlite") as conn:
        rows = dict(conn.execute("SELECT id, data FROM items WHERE kind IN ('qa', 'caption')"))
    qa_items = [json.loads(d) for key, d in rows.items() if key.startswith("qa:")]
    assert len(qa_items) == 5 and all(item["provenance"].get("generator") for item in qa_items)
    caption = json.loads(rows[f"caption:{R_GOOD}"])
    assert caption["drafts"] == [{"model": drafts[0]["model"], "caption": drafts[0]["caption"]}]
    assert all((out / view).is_file() for view in caption["views"][:1])


def test_out_must_not_be_the_video_folder(tmp_path: Path) -> None:
    folder = rendered_folder(tmp_path / "render")
    argv = ["--no-progress", "curate", "4d", "qa", "--data", str(folder), "--out", str(folder)]
    argv += ["--generator", "random", "--validator", "random", "--blind", "random"]
    assert main([*argv, "--blind", "random"]) == 2
    assert not (folder / "4d_qa.json").exists() and not (folder / ".lock").exists()


def test_objects_the_motion_and_quality_stages_dropped_are_skipped(tmp_path: Path) -> None:
    """`curate 4d motion` run on the objects' folder drops a still object, `quality predict` a
    textureless one: questions are not written about them (they were asked about)."""
    data = write_objects(tmp_path / "data")
    videos = data / "4d_object_multi_view_videos"
    write_mp4(videos / OBJ1 / "view_0_rgb_white_bg.mp4", [solid_frames(1)[0]] * 12)
    argv = ["--no-progress", "curate", "4d", "motion", str(videos), "--tolerance", "4"]
    assert main(argv) == 0  # the others change by 8 a frame
    listing = list_objects(data, SPEC)
    assert [o.uid for o in listing.objects] == [OBJ0]
    assert {s.uid: s.reason for s in listing.skipped} == {
        OBJ1: "motion dropped", OBJ2: "missing views"
    }  # fmt: skip
    # quality predict's output in the official layout's folder is read as in part 1's
    (videos / "quality.jsonl").write_text(json.dumps({"uid": OBJ0, "label": "textureless"}))
    assert list_objects(data, SPEC).skipped[0].reason == "quality: textureless"


def test_an_object_whose_render_failed_or_was_stopped_is_skipped(tmp_path: Path) -> None:
    """`curate 4d render` removes render.json when it starts an object: one it failed on, or
    was stopped in, holds a part of its views or an earlier render's; they were asked about."""
    folder = rendered_folder(tmp_path / "render")
    (folder / R_GOOD / ".job.json").write_text("{}")
    (folder / R_GOOD / "error.json").write_text(json.dumps({"reason": "no mesh"}))
    (folder / R_TEXTURELESS / ".job.json").write_text("{}")
    skipped = {s.uid: (s.reason, s.detail) for s in list_objects(folder, SPEC).skipped}
    assert skipped[R_GOOD] == (
        "render not complete",
        "no render.json, it failed: no mesh; run `curate 4d render` again",
    )
    assert "it was stopped or its worker died" in skipped[R_TEXTURELESS][1]


def test_motion_and_quality_of_an_earlier_render_are_out_of_date(tmp_path: Path) -> None:
    """An object rendered again after `curate 4d motion` / `quality predict` judged it: their
    verdict was of the old videos (a static object now moving still dropped, a broken one now
    still "high quality"); it is skipped as out of date, naming the command to run again."""
    data = write_objects(tmp_path / "data")
    videos = data / "4d_object_multi_view_videos"
    render = videos / OBJ0 / "render.json"
    render.write_text(json.dumps({"status": "rendered", "seed": 0}))
    assert main(["--no-progress", "curate", "4d", "motion", str(videos), "--tolerance", "4"]) == 0
    assert OBJ0 in [o.uid for o in list_objects(data, SPEC).objects]
    render.write_text(json.dumps({"status": "rendered", "seed": 1}))  # rendered again
    [stale] = [s for s in list_objects(data, SPEC).skipped if s.uid == OBJ0]
    assert stale.reason == "motion: out of date" and "curate 4d motion" in stale.detail
    (videos / "motion.jsonl").unlink()
    record = {"uid": OBJ0, "label": "high quality", "render": "0" * 32}
    (videos / "quality.jsonl").write_text(json.dumps(record) + "\n")
    [stale] = [s for s in list_objects(data, SPEC).skipped if s.uid == OBJ0]
    assert stale.reason == "quality: out of date"
    (videos / "quality.jsonl").write_text(json.dumps({"uid": OBJ0, "label": "high quality"}))
    assert OBJ0 in [o.uid for o in list_objects(data, SPEC).objects]  # an older vidbench's


def test_a_blank_caption_reply_is_counted_as_empty_not_as_asked_again(
    tmp_path: Path, shared_server: ChatServer, capsys
) -> None:  # type: ignore[no-untyped-def]
    """A reply of white space only (a local model's; an API backend's is a failed call) was
    counted "failed (asked again by the next run)", but it is stored and never asked again: it
    is counted as empty, and the run is incomplete (3)."""
    folder = rendered_folder(tmp_path / "render")
    argv = ["--no-progress", "curate", "4d", "captions", "--data", str(folder)]
    argv += ["--out", str(tmp_path / "drafts"), "--frames", "2", "--cache-dir", str(tmp_path / "f")]
    assert main([*argv, "--model", "python:support_models:Blank"]) == 3
    said = capsys.readouterr().err
    assert "drafted 0" in said and "failed 0, empty 1" in said, said
    assert "not asked again" in said
    assert read_jsonl(tmp_path / "drafts" / "caption_drafts.jsonl") == []
    assert main([*argv, "--model", "python:support_models:Blank"]) == 3
    assert "empty 1, asked now 0" in capsys.readouterr().err
