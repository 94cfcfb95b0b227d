"""The `vllm:` backend without vLLM or a GPU: its errors, and its calls into a stand-in `vllm`
module that records them (the real engine is untested here). What vLLM would receive for each
family is checked in test_vllm_inputs.py."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tiny_models import tiny_qwen2_vl
from tiny_own_code import tiny_own_vl
from vidbench.core.errors import ConfigError
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request
from vidbench.media.images import encode_image
from vidbench.models.registry import ModelOptions, load_model


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Qwen2-VL checkpoint: its chat template writes the prompts (the stand-in engine
    loads no weights)."""
    return tiny_qwen2_vl(tmp_path_factory.mktemp("ckpt"))


def image(i: int) -> ImagePart:
    return ImagePart(encode_image(np.full((8, 8, 3), i, np.uint8)), "image/jpeg", f"frame {i}")


def request(key: str, n_images: int, text: str = "Which?", **generation: float) -> Request:
    parts = (*(image(i) for i in range(n_images)), TextPart(text))
    return Request(key, key, (Message("user", parts),), GenerationConfig(**generation))


def test_missing_vllm_names_the_extra(checkpoint: Path) -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    with pytest.raises(ConfigError, match=r"needs vllm.*pip install 'vidbench\[vllm\]'"):
        load_model(f"vllm:{checkpoint}")


def test_factory_does_not_import_vllm_and_the_engine_batches(
    fake_vllm: Path, checkpoint: Path
) -> None:
    options = ModelOptions(seed=3, extra={"batch_size": "8", "tensor_parallel_size": "2"})
    model = load_model(f"vllm:{checkpoint}", options)
    assert "vllm" not in sys.modules  # checked and built, not imported
    assert model.batch_size == 8
    requests = [
        request(f"k{i}", 18 - i, temperature=0.5, top_p=0.9, max_tokens=7) for i in range(3)
    ]
    requests.append(request("quiet", 1, "silence"))
    responses = asyncio.run(model.generate(requests))
    engine = sys.modules["vllm"].ENGINES[0]
    assert engine.kwargs["limit_mm_per_prompt"] == {"image": 18}
    assert engine.kwargs["tensor_parallel_size"] == 2 and engine.kwargs["seed"] == 3
    assert engine.kwargs["model"] == str(checkpoint)
    assert engine.kwargs["trust_remote_code"] is False
    [(prompts, params, use_tqdm)] = engine.calls  # one call for the whole batch
    assert len(prompts) == 4 and use_tqdm is False
    assert prompts[0]["prompt"].count("<|image_pad|>") == 18
    assert len(prompts[0]["multi_modal_data"]["image"]) == 18
    assert params[0].kwargs == {"temperature": 0.5, "top_p": 0.9, "max_tokens": 7, "seed": None}
    assert [r.text for r in responses[:3]] == ["answer 18", "answer 17", "answer 16"]
    assert responses[0].usage.input_tokens == 10 and responses[0].usage.output_tokens == 2
    assert responses[3].status == "empty"
    # a later request with more images than the engine was started for is rejected (a rerun
    # as it is gets the same), not a crash
    [too_many] = asyncio.run(model.generate([request("big", 20)]))
    assert too_many.status == "rejected" and "max_images=20" in (too_many.error or "")
    assert "change the engine's settings (--model-opt) first" in (too_many.error or "")


def test_max_images_starts_the_engine_early(fake_vllm: Path, checkpoint: Path) -> None:
    model = load_model(f"vllm:{checkpoint}", ModelOptions(extra={"max_images": "32"}))
    asyncio.run(model.start())
    assert sys.modules["vllm"].ENGINES[-1].kwargs["limit_mm_per_prompt"] == {"image": 32}


def test_a_checkpoint_without_a_processor_stops_at_start(fake_vllm: Path, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "qwen2_vl"}')
    model = load_model(f"vllm:{tmp_path}")
    with pytest.raises(ConfigError, match="cannot load its processor"):
        asyncio.run(model.start())


def test_an_engine_that_does_not_start_is_reported_once(fake_vllm: Path, checkpoint: Path) -> None:
    model = load_model(f"vllm:{checkpoint}", ModelOptions(extra={"max_model_len": "1"}))
    first = asyncio.run(model.generate([request("a", 2)]))
    second = asyncio.run(model.generate([request("b", 2)]))
    for [response] in (first, second):
        assert response.status == "error"
        assert "vLLM did not start: max_model_len 1 is shorter" in (response.error or "")
    assert len(sys.modules["vllm"].ATTEMPTS) == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"gpu_memory_utilization": "1.5"}, "gpu_memory_utilization='1.5'"),
        ({"batch_size": "many"}, "batch_size='many'"),
        ({"dtype": "int4"}, "dtype='int4'"),
        ({"device": "cuda"}, "does not take --model-opt device"),
        ({"trust_remote_code": "perhaps"}, "trust_remote_code='perhaps'"),
    ],
)
def test_bad_settings_fail_early(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_model("vllm:org/model", ModelOptions(extra=extra))


def test_missing_checkpoint_is_named(fake_vllm: Path) -> None:
    with pytest.raises(ConfigError, match="no model directory at /nowhere/ckpt"):
        load_model("vllm:/nowhere/ckpt", ModelOptions())


def test_own_code_needs_trust_and_reaches_the_engine(fake_vllm: Path, tmp_path: Path) -> None:
    own = tiny_own_vl(tmp_path / "own")
    with pytest.raises(ConfigError, match="trust_remote_code=true"):
        load_model(f"vllm:{own}")
    model = load_model(f"vllm:{own}", ModelOptions(extra={"trust_remote_code": "true"}))
    assert model.identity()["trust_remote_code"] is True
    [response] = asyncio.run(model.generate([request("own", 2)]))
    assert response.text == "answer 2"
    engine = sys.modules["vllm"].ENGINES[-1]
    assert engine.kwargs["trust_remote_code"] is True
    [(prompts, _, _)] = engine.calls
    assert prompts[0]["prompt"].count("<image>") == 2  # its processor's chat template


@pytest.mark.parametrize(("finish", "truncated"), [("length", True), ("stop", False)])
def test_an_output_stopped_at_its_token_limit_is_marked_truncated(
    finish: str, truncated: bool
) -> None:
    from types import SimpleNamespace

    from vidbench.models.vllm_backend import read_output

    completion = SimpleNamespace(text="(A", token_ids=[1, 2], finish_reason=finish)
    output = SimpleNamespace(prompt_token_ids=[0] * 5, outputs=[completion])
    response = read_output("k", output, 0.1)
    assert (response.ok, response.text, response.truncated) == (True, "(A", truncated)


def test_a_prompt_vllm_refuses_fails_alone(fake_vllm: Path, checkpoint: Path) -> None:
    """Was: vLLM refused the whole call, and every request of the batch was recorded with the
    error of one prompt longer than max_model_len (a rerun batched them together again)."""
    model = load_model(f"vllm:{checkpoint}", ModelOptions(extra={"batch_size": "8"}))
    requests = [request("a", 2), request("long", 1, "too long"), request("b", 3)]
    responses = asyncio.run(model.generate(requests))
    assert [r.text for r in responses] == ["answer 2", None, "answer 3"]
    assert "longer than the maximum model length" in (responses[1].error or "")
