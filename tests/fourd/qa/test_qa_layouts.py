"""`curate 4d qa` on the output folder of `curate 4d render` (part 1): objects part 1 dropped
and objects with an unreadable view are recorded and skipped; the rest become questions that
`run 4dbench-qa` reads. Also `curate 4d captions` on the same folder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import write_object_views
from vidbench.cli import main
from vidbench.report.results_dir import read_jsonl
from vidbench.testing import ChatServer, request_text

GOOD, DROPPED, TEXTURELESS, BROKEN = (f"{i:032x}" for i in (20, 21, 22, 23))


def rendered_folder(root: Path) -> Path:
    """<uid>/view_K_rgb_white_bg.mp4 + render.json and quality.jsonl, as part 1 leaves them."""
    for uid in (GOOD, DROPPED, TEXTURELESS, BROKEN):
        write_object_views(root, uid, frames=8)
    folder = root / "4d_object_multi_view_videos"
    (folder / DROPPED / "render.json").write_text(
        json.dumps({"status": "dropped", "reason": "no motion"})
    )
    (folder / BROKEN / "view_8_rgb_white_bg.mp4").write_bytes(b"not a video")
    labels = [(GOOD, "high quality"), (TEXTURELESS, "textureless"), (BROKEN, "high quality")]
    (folder / "quality.jsonl").write_text(
        "".join(json.dumps({"uid": u, "label": label}) + "\n" for u, label in labels)
    )
    return folder


def generic(body: dict[str, Any]) -> str:
    """One fine question per object and subtask; every check passes; the blind models pick the
    option "wrong guess", wherever the shuffle put it."""
    text = request_text(body)
    if "You are writing" in text:
        uid = re.search(r"object (\w+)\.", text).group(1)  # type: ignore[union-attr]
        subtask = re.search(r"Subtask: ([A-Za-z ]+)\.", text).group(1)  # type: ignore[union-attr]
        question = {
            "question": f"{subtask} question about {uid}?",
            "options": {"A": "right", "B": "wrong guess", "C": "other", "D": "another"},
            "answer": "A",
        }
        return json.dumps({"questions": [question]})
    if "You check" in text:
        return '{"verdict": "accept", "reason": "ok"}'
    if "Describe the object" in text:
        return "A small cube that turns slowly."
    letter = re.search(r"^\(([A-D])\) wrong guess$", text, re.M).group(1)  # type: ignore[union-attr]
    return f"({letter})"


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
    assert funnel["objects"] == {
        "layout": "rendered",
        "found": 4,
        "used": 1,
        "skipped": {"render dropped": 1, "quality: textureless": 1, "unreadable video": 1},
    }
    broken = next(p for p in funnel["problems"] if p.get("uid") == BROKEN)
    assert "view_8_rgb_white_bg.mp4" in broken["detail"]
    assert funnel["total"]["kept"] == 5
    settings = json.loads((out / "settings.json").read_text())
    assert settings["frame_spec"]["views"] == [0, 8] and settings["frame_spec"]["frames"] == 3
    qa = json.loads((out / "4d_qa.json").read_text())
    assert sorted(qa) == sorted(
        f"{GOOD}_{s}"
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
    assert [d["uid"] for d in drafts] == [GOOD]
    assert drafts[0]["machine_draft"] is True
    assert drafts[0]["caption"] == "A small cube that turns slowly."
    shared_server.reset(reply=generic)
    assert main([*argv, "--cache-dir", str(tmp_path / "frames")]) == 0
    assert shared_server.requests == []  # drafted once, read from the store after
