"""The `hf:` backend end to end on tiny random Qwen2-VL and LLaVA-OneVision models, on CPU."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from conftest import make_qa_dataset, vary_question_lengths
from tiny_models import tiny_llava_onevision, tiny_qwen2_vl
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.files import read_jsonl
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request
from vidbench.media.frames import load_frames
from vidbench.media.images import encode_image
from vidbench.models.hf_inputs import to_chat
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.keys import plan_key
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig

QWEN_TOKENS_PER_IMAGE = 4  # 56 px -> 4x4 patches of 14 px, merged 2x2
FRAMES = 18  # 3 views x 6 frames, the official 4D-Bench QA setting


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


@pytest.fixture(scope="module")
def qa_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10 questions whose lengths differ, so batched prompts need padding."""
    return vary_question_lengths(
        make_qa_dataset(tmp_path_factory.mktemp("qa"), n_objects=2, frames=12)
    )


def configure(
    model_dir: Path,
    data: Path,
    out: Path,
    batch_size: int,
    task: str = "4dbench-qa",
    limit: int | None = None,
) -> Run:
    config = RunConfig(
        task=task,
        data=str(data),
        model=f"hf:{model_dir}",
        out=str(out),
        concurrency=4,
        generation={"max_tokens": 6},
        model_options={"device": "cpu", "dtype": "float32", "batch_size": str(batch_size)},
        cache_dir=str(out / "frames"),
        progress=False,
        limit=limit,
    )
    return Run(config, console=Console(file=io.StringIO()))


class Spy:
    """Records what the processor is given and how many image tokens the model's prefill sees."""

    def __init__(self, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
        loaded = run.model.load()  # type: ignore[attr-defined]
        self.image_token_id = loaded.model.config.image_token_id
        self.calls: list[tuple[list[str], list[list[Any]]]] = []
        self.prefills: list[tuple[list[int], int]] = []
        processor_class = type(loaded.processor)
        original = processor_class.__call__

        def spy_call(processor: Any, *args: Any, **kwargs: Any) -> Any:
            self.calls.append((list(kwargs["text"]), kwargs.get("images") or []))
            return original(processor, *args, **kwargs)

        monkeypatch.setattr(processor_class, "__call__", spy_call)
        loaded.model.register_forward_pre_hook(self.on_forward, with_kwargs=True)
        loaded.model.model.visual.register_forward_pre_hook(self.on_vision, with_kwargs=True)
        self.patches: list[int] = []

    def on_forward(self, module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        input_ids = kwargs["input_ids"]
        if input_ids.shape[1] > 1:  # the prefill, not a decoding step
            per_prompt = (input_ids == self.image_token_id).sum(dim=1).tolist()
            self.prefills.append((per_prompt, self.patches.pop(0)))

    def on_vision(self, module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        pixels = args[0] if args else kwargs["hidden_states"]
        self.patches.append(pixels.shape[0])

    def images_by_question(self) -> dict[str, list[Any]]:
        seen = {}
        for texts, images in self.calls:
            for text, prompt_images in zip(texts, images, strict=True):
                seen[text] = prompt_images
        return seen


def expected_pixels(run: Run, sample_id: str) -> list[np.ndarray]:
    from vidbench.media.images import decode_image

    sample = next(s for s in run.samples if s.id == sample_id)
    frames = load_frames(sample.media, run.task.frame_spec, None)
    return [np.asarray(decode_image(f.image.data)) for f in frames]


def assert_frames_in_spec_order(run: Run, spy: Spy) -> None:
    by_prompt = spy.images_by_question()
    assert len(by_prompt) == len(run.samples)
    for sample in run.samples:
        prompt = next(t for t in by_prompt if sample.metadata["official_qa_text"] in t)
        got = [np.asarray(image) for image in by_prompt[prompt]]
        want = expected_pixels(run, sample.id)
        assert len(got) == FRAMES
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def stored(out: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in read_jsonl(out / "samples.jsonl")}


@pytest.mark.slow
def test_qwen2_vl_end_to_end_batched_equals_unbatched(
    tiny_qwen: Path, qa_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = {}
    for batch_size in (1, 2):
        out = tmp_path / f"batch{batch_size}"
        run = configure(tiny_qwen, qa_data, out, batch_size)
        spy = Spy(run, monkeypatch)
        run.run()
        # the model saw 18 images' worth of image tokens per prompt, 16 patches per image
        assert spy.prefills
        for per_prompt, patches in spy.prefills:
            assert per_prompt == [FRAMES * QWEN_TOKENS_PER_IMAGE] * len(per_prompt)
            assert patches == len(per_prompt) * FRAMES * 16
        assert max(len(p) for p, _ in spy.prefills) == batch_size
        assert_frames_in_spec_order(run, spy)
        records = stored(out)
        assert len(records) == 10
        assert all(r["status"] == "ok" for r in records.values()), records
        assert all(isinstance(r["raw_output"], str) and r["raw_output"] for r in records.values())
        usage = json.loads((out / "usage.json").read_text())
        assert usage["requests"] == 10
        assert usage["input_tokens"] > 10 * FRAMES * QWEN_TOKENS_PER_IMAGE
        assert 10 <= usage["output_tokens"] <= 10 * 6
        outputs[batch_size] = {k: r["raw_output"] for k, r in records.items()}
    assert outputs[1] == outputs[2]
    assert len(set(outputs[1].values())) > 1  # the random model's answer depends on its input


def test_time_first_order_reaches_the_processor(
    tiny_qwen: Path, qa_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = configure(tiny_qwen, qa_data, tmp_path / "tf", 2, "4dbench-qa:time-first", limit=2)
    spy = Spy(run, monkeypatch)
    run.infer()
    assert_frames_in_spec_order(run, spy)
    first = next(iter(run.samples))
    views = [f.view for f in load_frames(first.media, run.task.frame_spec, None)]
    assert views[:6] == [1, 8, 16, 1, 8, 16]


def test_cli_run_with_model_options(tiny_qwen: Path, qa_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_data), "--model"]
    argv += [f"hf:{tiny_qwen}", "--out", str(out), "--limit", "3", "--max-tokens", "4"]
    argv += ["--model-opt", "device=cpu", "--model-opt", "batch_size=3"]
    assert main(argv) == 0
    records = stored(out)
    assert [r["status"] for r in records.values()] == ["ok"] * 3
    results = json.loads((out / "results.json").read_text())
    identity = results["model_identity"]
    assert len(identity.pop("weights")) == 16  # which files: test_hf_checkpoint_files.py
    assert identity == {
        "spec": f"hf:{tiny_qwen}",
        "dtype": "auto",
        "batch_size": 3,
        "padding_side": "left",
        "attention": "default",
        "device_type": "cpu",
        "frame_input": "images",
        "video_frames": None,
        "trust_remote_code": False,
    }
    assert results["usage"]["output_tokens"] > 0
    timing = results["timing"]  # the device's share of the infer stage
    assert timing["batches"] == 1 and 0 < timing["device_s"] <= timing["wall_s"]
    assert timing["prepare_s"] > 0 and 0 < timing["device_busy"] <= 1


def test_batch_size_and_padding_are_part_of_the_store_key(tiny_qwen: Path) -> None:
    """Batched generation is not bitwise batch-invariant on GPUs: answers made with another
    batch size or padding are other answers, never mixed into a resumed run."""
    keys = set()
    for options in ({}, {"batch_size": "2"}, {"padding_side": "right"}, {"dtype": "float32"}):
        model = load_model(f"hf:{tiny_qwen}", ModelOptions(extra={"device": "cpu", **options}))
        keys.add(plan_key({"task": "t"}, model.identity()))
    assert len(keys) == 4


def test_a_folder_typed_another_way_is_the_same_model(
    tiny_qwen: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: `hf:DIR/` or a relative `hf:NAME` keyed other answers than `hf:/abs/DIR`: the run
    asked every question again and removed the results as another configuration's."""
    monkeypatch.chdir(tiny_qwen.parent)
    keys = set()
    for name in (str(tiny_qwen), f"{tiny_qwen}/", tiny_qwen.name, f"./{tiny_qwen.name}"):
        model = load_model(f"hf:{name}", ModelOptions(extra={"device": "cpu"}))
        keys.add(plan_key({"task": "t"}, model.identity()))
        assert model.spec == f"hf:{name}"  # shown as typed
    assert len(keys) == 1


@pytest.mark.slow
def test_llava_onevision_multi_image(tmp_path: Path) -> None:
    model_dir = tiny_llava_onevision(tmp_path / "tiny-llava-ov")
    model = load_model(f"hf:{model_dir}", ModelOptions(extra={"device": "cpu", "batch_size": "4"}))
    loaded = model.load()  # type: ignore[attr-defined]
    assert loaded.family.name == "llava-onevision"
    rng = np.random.default_rng(0)
    images = [
        ImagePart(encode_image(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)))
        for _ in range(FRAMES)
    ]
    requests = [
        Request(f"k{i}", f"s{i}", (Message("user", (*images[i:], TextPart("Which? " * i))),))
        for i in range(4)
    ]
    batched = asyncio.run(model.generate(requests))
    single = [asyncio.run(model.generate([r]))[0] for r in requests]
    assert [r.status for r in batched] == ["ok"] * 4
    assert [r.text for r in batched] == [r.text for r in single]
    # multi-image LLaVA-OneVision: 2x2 patches + 1 newline token per image
    assert all(r.usage.input_tokens > (FRAMES - i) * 5 for i, r in enumerate(batched))
    assert all(r.usage.output_tokens > 0 for r in batched)


def test_sampling_is_seeded(tiny_qwen: Path) -> None:
    model = load_model(f"hf:{tiny_qwen}", ModelOptions(extra={"device": "cpu"}))
    settings = GenerationConfig(temperature=1.0, top_p=0.9, max_tokens=8, seed=7)
    request = Request("k", "s", (Message("user", (TextPart("Describe it."),)),), settings)
    first, second = (asyncio.run(model.generate([request]))[0] for _ in range(2))
    assert first.ok and first.text == second.text
    # the tiny random model ends no sequence: its 8 tokens stopped at the limit
    assert first.truncated and first.usage.output_tokens == 8


def test_to_chat_keeps_parts_in_order() -> None:
    a, b = ImagePart(b"a"), ImagePart(b"b")
    messages = (
        Message("system", (TextPart("Be brief."),)),
        Message("user", (a, TextPart("then"), b, TextPart("?"))),
    )
    chat = to_chat(messages)
    assert chat.images == [a, b] and chat.clips == []
    assert chat.conversation == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [
                {"type": "image"},
                {"type": "text", "text": "then"},
                {"type": "image"},
                {"type": "text", "text": "?"},
            ],
        },
    ]


def test_directory_without_config_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no config.json"):
        load_model(f"hf:{tmp_path}")


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"pip install 'vidbench\[hf\]'"):
        load_model("hf:Qwen/Qwen2-VL-2B-Instruct")


def test_a_checkpoint_that_does_not_load_stops_the_run(
    qa_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "qwen2_vl"}')  # no weights, no tokenizer
    out = tmp_path / "out"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_data)]
    assert main([*argv, "--model", f"hf:{broken}", "--out", str(out)]) == 2
    assert f"hf:{broken}: cannot load {broken}" in " ".join(capsys.readouterr().err.split())
    assert not (out / "samples.jsonl").exists()
