"""The `autoeval-video` task on the real clips (tests/data): 8 and 16 frames, every grid layout
(sizes and frame placement checked on pixels), the prompt, and a whole run with a model and a
judge served over HTTP."""

from __future__ import annotations

import base64
import io
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from autoeval_support import judge_args, official_prompt, rows, vidbench
from conftest import AUTOEVAL, AUTOEVAL_CLIPS
from vidbench.core.errors import EXIT_INCOMPLETE, ConfigError
from vidbench.core.messages import ImagePart, TextPart
from vidbench.core.records import Sample
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.media.spec import parse_grid
from vidbench.registry import get_task
from vidbench.testing import ChatServer

MAX_SIDE = 96  # small frames keep the test fast; decoding the clips is the cost


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("autoeval_frames")


@pytest.fixture(scope="module")
def clips() -> list[Sample]:
    task = get_task("autoeval-video")
    return [s for s in task.load(AUTOEVAL).items if s.media.videos[0].is_file()]


@pytest.fixture(scope="module")
def plain(cache_dir: Path, clips: list[Sample]) -> dict[int, dict[str, list[Frame]]]:
    """The frames of every clip without a grid, 8 and 16 of them (decoded once, then cached)."""
    cache = FrameCache(cache_dir)
    found: dict[int, dict[str, list[Frame]]] = {}
    with ThreadPoolExecutor(2) as pool:  # as the runner does: clips decoded side by side
        for n in (8, 16):
            spec = get_task(f"autoeval-video:frames-{n}", max_side=MAX_SIDE).frame_spec
            loaded = pool.map(lambda s, spec=spec: load_frames(s.media, spec, cache), clips)
            found[n] = {s.id: frames for s, frames in zip(clips, loaded, strict=True)}
    return found


def _pixels(frame: Frame) -> np.ndarray:
    return np.asarray(decode_image(frame.image.data)).astype(float)


def test_clips_with_8_and_16_frames(
    plain: dict[int, dict[str, list[Frame]]], clips: list[Sample]
) -> None:
    assert len(clips) == AUTOEVAL_CLIPS
    for n, by_clip in plain.items():
        for sample in clips:
            frames = by_clip[sample.id]
            assert len(frames) == n
            indices = [f.index for f in frames]
            assert indices == sorted(indices) and len(set(indices)) == n
            assert frames[0].index == 0  # uniform over the whole clip, both ends
            assert max(_pixels(frames[0]).shape[:2]) == MAX_SIDE


@pytest.mark.parametrize(
    ("variant", "frames"),
    [("grid-1x8", 8), ("grid-4x4", 16), ("grid-2x4-square", 8), ("grid-4x4-square", 16)],
)
def test_grid_layouts_on_the_real_clips(
    variant: str,
    frames: int,
    plain: dict[int, dict[str, list[Frame]]],
    clips: list[Sample],
    cache_dir: Path,
) -> None:
    task = get_task(f"autoeval-video:frames-{frames}+{variant}", max_side=MAX_SIDE)
    rows_, cols, square = parse_grid(task.frame_spec.grid)
    cache = FrameCache(cache_dir)
    for sample in clips:
        [grid] = load_frames(sample.media, task.frame_spec, cache)
        picture = _pixels(grid)
        singles = [_pixels(f) for f in plain[frames][sample.id]]
        cell_h, cell_w = singles[0].shape[:2]
        width, height = cols * cell_w, rows_ * cell_h
        side = max(width, height)
        expected = (side, side) if square else (height, width)
        assert picture.shape[:2] == expected, (sample.id, variant)
        top, left = ((side - height) // 2, (side - width) // 2) if square else (0, 0)
        for i, own in enumerate(singles):
            r, c = divmod(i, cols)
            y, x = top + r * cell_h, left + c * cell_w
            cell = picture[y : y + cell_h, x : x + cell_w]
            error = np.abs(cell - own).mean()  # the frame, through one more JPEG encoding
            assert error < 6, (sample.id, variant, i, error)
            for other in singles:  # a distinct frame fits the cell worse than its own frame
                if np.abs(other - own).mean() > 10:
                    assert np.abs(cell - other).mean() > error
        if square:  # black bands above and below the frames (past the JPEG blocks at the edge)
            assert top > 16 and picture[: top - 16].max() < 8
            assert picture[top + height + 16 :].max() < 8
        message = task.build_messages(sample, [grid])[0]
        assert [type(p) for p in message.content] == [ImagePart, TextPart]
        assert message.content[-1].text == sample.question


def test_messages_and_variants(
    plain: dict[int, dict[str, list[Frame]]], clips: list[Sample]
) -> None:
    task = get_task("autoeval-video:frames-16")
    sample = clips[0]
    [message] = task.build_messages(sample, plain[16][sample.id])
    assert len(message.images) == 16 and message.text == sample.question
    assert get_task("autoeval-video").frame_spec.frames == 8
    assert get_task("autoeval-video:official").protocol == "official"
    assert get_task("autoeval-video:official").judge_attempts == 11  # the judge stage uses it
    assert get_task("autoeval-video").protocol == "robust"
    # the judge protocol does not decide the model's answers: same plan, answers reused
    assert get_task("autoeval-video:frames-16+official").settings() == task.settings()
    with pytest.raises(ConfigError, match="has 8 cells for 16 frames"):
        get_task("autoeval-video:frames-16+grid-1x8")
    with pytest.raises(ConfigError, match="unknown or repeated task variant 'sharp'"):
        get_task("autoeval-video:sharp")
    with pytest.raises(ConfigError, match="unknown or repeated"):
        get_task("autoeval-video:official+robust")


def _image_size(body: dict) -> list[tuple[int, int]]:
    sizes = []
    for part in body["messages"][0]["content"]:
        if part["type"] == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            sizes.append(Image.open(io.BytesIO(data)).size)
    return sizes


def test_run_with_a_served_model_and_judge(
    tmp_path: Path, plain: dict[int, dict[str, list[Frame]]], cache_dir: Path
) -> None:
    answer = "The person is fastening a seat belt."

    def reply(body: dict) -> str:
        content = body["messages"][0]["content"]
        return "Reason.\n1" if isinstance(content, str) else answer

    out = tmp_path / "run"
    with ChatServer(reply=reply) as server:
        code = vidbench(
            "run", "autoeval-video:frames-16+grid-4x4", "--data", AUTOEVAL,
            "--model", f"openai-compat:{server.base_url}#model", "--model-opt", "backoff=0.01",
            "--out", out, "--max-side", MAX_SIDE, "--cache-dir", cache_dir, *judge_args(server),
        )  # fmt: skip
        assert code == EXIT_INCOMPLETE  # the instances whose clip the data lacks
        bodies = server.requests
    model_calls = [b for b in bodies if isinstance(b["messages"][0]["content"], list)]
    judge_calls = [b["messages"][0]["content"] for b in bodies if b not in model_calls]
    assert len(model_calls) == AUTOEVAL_CLIPS and len(judge_calls) == AUTOEVAL_CLIPS
    for body in model_calls:
        [size] = _image_size(body)
        assert max(size) == 4 * MAX_SIDE  # 4x4 cells, the longer side of each MAX_SIDE
    rules = {str(r["ID"]): r["Rule"] for r in rows()}
    clip_ids = sorted(plain[16], key=int)
    assert sorted(judge_calls) == sorted(official_prompt(rules[i], answer) for i in clip_ids)
    results = json.loads((out / "results.json").read_text())
    assert results["errors_by_status"] == {"media": 327 - AUTOEVAL_CLIPS}  # no clip here
    assert results["column_n"]["Overall"] == AUTOEVAL_CLIPS
    assert results["columns"]["Overall"] == 100.0
    assert results["frame_spec"]["grid"] == "4x4" and results["protocol"] == "robust"
    lines = (out / "samples.jsonl").read_text().splitlines()
    answered = [r for r in map(json.loads, lines) if r["status"] == "ok"]
    [grid] = answered[0]["frames"]  # one image, and the 16 frames it is made of, in order
    tiles = [tile["index"] for tile in grid["tiles"]]
    assert len(tiles) == 16 and tiles == sorted(set(tiles)) and grid["index"] == tiles[0]
