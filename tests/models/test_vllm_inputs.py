"""What the `vllm:` backend hands vLLM for each family, built and checked without vLLM or a GPU:
the prompt (the checkpoint's chat template, one placeholder per image or per clip), the
`multi_modal_data` (the request's frames, in order, as images or as clips), the engine's
per-prompt limit and the sampling settings, through a stand-in `vllm` module that records the
calls (conftest.py). Each prompt and its media are then given to the family's transformers
processor, which must expand every placeholder into the model's tokens: the two agree on what
the model is shown. Whether vLLM's own implementation of a family accepts them is not tested
here (no GPU): docs/reproducing-papers.md says what was and was not measured."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tiny_families import build
from tiny_models import tiny_llava_onevision, tiny_qwen2_vl
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request
from vidbench.media.images import decode_image, encode_image
from vidbench.models.registry import ModelOptions, load_model
from video_stand_in import use_stand_in


@dataclass(frozen=True)
class Case:
    frames: int  # frames in the request (one run of images: one clip in video mode)
    modality: str  # vLLM's: image or video
    placeholder: str  # what the chat template writes per image or clip ("" for plain prompts)
    expanded: str  # the token the processor expands it into
    options: dict[str, str] = field(default_factory=dict)


CASES = {
    "qwen2-vl": Case(3, "image", "<|image_pad|>", "<|image_pad|>"),
    "llava-onevision": Case(3, "image", "<image>", "<image>"),
    "video-llava": Case(8, "video", "<video>", "<video>"),
    "instructblip-video": Case(4, "video", "", "<video>"),
    "internvl": Case(3, "image", "<IMG_CONTEXT>", "<IMG_CONTEXT>"),
    "internvl-video": Case(6, "video", "<video>", "<IMG_CONTEXT>", {"frame_input": "video"}),
    "gemma-3": Case(3, "image", "<start_of_image>", "<image_soft_token>"),
    "idefics3": Case(3, "image", "<image>", "<image>"),
    "llava": Case(1, "image", "<image>", "<image>"),
    "instructblip": Case(1, "image", "", "<image>"),
    "blip-2": Case(1, "image", "", "<image>"),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vllm-families")
    paths = {
        "qwen2-vl": tiny_qwen2_vl(root / "qwen2-vl"),
        "llava-onevision": tiny_llava_onevision(root / "llava-onevision"),
    }
    names = ("video-llava", "instructblip-video", "internvl", "gemma-3", "idefics3")
    for name in (*names, "llava", "instructblip", "blip-2"):
        paths[name] = build(name, root / name)
    paths["internvl-video"] = paths["internvl"]
    return paths


def frame(i: int) -> ImagePart:
    rng = np.random.default_rng(i)
    pixels = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)
    return ImagePart(encode_image(pixels, "png"), "image/png", f"view 1, frame {i}")


def request(key: str, frames: int, question: str) -> Request:
    parts = (TextPart("Look at the video."), *(frame(i) for i in range(frames)), TextPart(question))
    generation = GenerationConfig(temperature=0.0, top_p=1.0, max_tokens=9, seed=5)
    return Request(key, key, (Message("user", parts),), generation)


def expand(processor: Any, prompt: str, media: dict[str, Any], argument: str) -> Any:
    """The transformers processor on exactly what vLLM gets."""
    kwargs: dict[str, Any] = {"text": [prompt], "return_tensors": "pt"}
    if "image" in media:
        kwargs["images"] = [media["image"]]
    if "video" in media:
        kwargs[argument] = media["video"]
    return processor(**kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_what_vllm_receives(
    name: str,
    checkpoints: dict[str, Path],
    fake_vllm: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = CASES[name]
    if case.modality == "video":
        use_stand_in(monkeypatch)  # the processor's video processor, for the check below
    model = load_model(f"vllm:{checkpoints[name]}", ModelOptions(seed=1, extra=case.options))
    requests = [request("a", case.frames, "Which?"), request("b", case.frames, "Which one? " * 3)]
    responses = asyncio.run(model.generate(requests))
    assert [r.status for r in responses] == ["ok", "ok"], responses
    assert model.identity()["frame_input"] == ("video" if case.modality == "video" else "images")

    engine = sys.modules["vllm"].ENGINES[-1]
    items = 1 if case.modality == "video" else case.frames
    assert engine.kwargs["limit_mm_per_prompt"] == {case.modality: items}
    assert engine.kwargs["trust_remote_code"] is False
    [(inputs, params, _)] = engine.calls
    assert [p.kwargs for p in params] == [
        {"temperature": 0.0, "top_p": 1.0, "max_tokens": 9, "seed": 5}
    ] * 2
    want = [np.asarray(decode_image(frame(i).data)) for i in range(case.frames)]
    builder = model.builder()  # type: ignore[attr-defined]
    for sent, question in zip(inputs, ("Which?", "Which one? " * 3), strict=True):
        prompt, media = sent["prompt"], sent["multi_modal_data"]
        assert list(media) == [case.modality]
        assert question in prompt and "Look at the video." in prompt
        if case.placeholder:
            assert prompt.count(case.placeholder) == items
        else:  # a plain prompt: the text alone, the processor places the video
            assert prompt == "Look at the video." + question
        if case.modality == "image":
            got = [np.asarray(image) for image in media["image"]]
        else:
            [clip] = media["video"]
            got = list(clip)
        assert len(got) == case.frames
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
        processor = builder.processor  # with its (stand-in) video processor in video mode
        tokens = expand(processor, prompt, media, builder.family.video_argument)
        tokenizer = getattr(processor, "tokenizer", processor)
        token_id = tokenizer.convert_tokens_to_ids(case.expanded)
        # the processor raises when placeholders and media disagree; each item became tokens
        assert int((tokens["input_ids"] == token_id).sum()) >= items
