"""Sources for the export tests: a 4D-Bench release (`vidbench synth 4d`) with the records a
curation leaves beside its data, written by the curation's own writers, and an MMWorld synthetic
subset built by the real `curate mmworld all` on a scripted model."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from vidbench.benchmarks.fourd.curate import funnel
from vidbench.benchmarks.fourd.curate.manifest import AssetProblem as DroppedAsset
from vidbench.benchmarks.fourd.curate.qa.config import QAConfig
from vidbench.benchmarks.fourd.curate.qa.output import SETTINGS_FILE, settings
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.synthetic.writer import QA_DATA, VIDEOS
from vidbench.cli import main
from vidbench.core.files import write_json
from vidbench.models.registry import ModelChoice
from vidbench.testing import ChatServer, request_text
from vidbench.testing.speech import shape_frames, write_talking_video

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # before `datasets` is imported


def vidbench(*args: str | Path) -> int:
    return main(["--no-progress", *map(str, args)])


def fourd_release(root: Path) -> Path:
    """Two procedural objects in the official layout, plus a `curate 4d qa` settings.json, a
    render-stage funnel.json and each object's render.json."""
    assert (
        vidbench("synth", "4d", "--out", root, "--objects", "2", "--frames", "12", "--size", "32")
        == 0
    )
    qa = root / QA_DATA
    config = QAConfig(
        data=root / "rendered",
        out=qa,
        generator=ModelChoice("openai:gpt-4o"),
        validator=ModelChoice("anthropic:claude-sonnet-4-5"),
        blind=(ModelChoice("blind:openai:gpt-4o-mini"), ModelChoice("blind:local-llm")),
    )
    write_json(qa / SETTINGS_FILE, settings(config), indent=1)
    dropped = DroppedAsset("f" * 32, "assets/still.glb", "no animation")
    funnel.record(qa, "render", funnel.stage_count(3, 2, [dropped]))
    for folder in sorted((qa / VIDEOS).iterdir()):
        record = {"uid": folder.name, "status": "rendered", "settings": RenderSettings().identity()}
        write_json(folder / "render.json", record)
    return root


def _mmworld_reply(body: dict[str, Any]) -> str:
    """A generator that asks about the disc's colour (red in every video) and checks that answer
    from the keyframes, never from the question alone."""
    text = request_text(body)
    if "understands the VISUAL" in text:
        question = {
            "question": "What colour is the disc?",
            "options": {"a": "red", "b": "blue", "c": "green", "d": "pink"},
            "answer": "a",
        }
        return json.dumps({"questions": [question]})
    options = dict(re.findall(r"^([a-d])\. (.+)$", text, flags=re.MULTILINE))
    wanted = "pink" if "without the video" in text else "red"
    return "(" + next(k for k, v in options.items() if v == wanted) + ")"


def mmworld_subsets(root: Path) -> Path:
    """`curate mmworld all --subsets visual` over two silent videos: OUT/mmworld.json with the
    visual subset, its video links, settings.json and funnel.json."""
    for name in ("one", "two"):
        write_talking_video(
            root / "videos" / "Science" / f"{name}.mp4", shape_frames(24, (220, 30, 30)), None, 12
        )
    out = root / "curated"
    with ChatServer(reply=_mmworld_reply) as server:
        code = vidbench(
            "curate", "mmworld", "all", root / "videos", "--out", out,
            "--model", f"openai-compat:{server.base_url}#generator", "--subsets", "visual",
            "--keyframes", "3", "--max-side", "64", "--concurrency", "4",
            "--asr-cache-dir", root / "asr", "--cache-dir", root / "frames",
        )  # fmt: skip
    assert code == 0
    return out
