"""The `vllm:` backend without vLLM or a GPU: its errors, its message conversion, and its calls
into a stand-in `vllm` module that records them (the real engine is untested here)."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from vidbench.core.errors import ConfigError
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request
from vidbench.models.registry import ModelOptions, load_model
from vidbench.models.vllm_backend import vllm_messages

# A stand-in for the `vllm` package: records the engine arguments and chat calls, answers
# "answer <n images>", or nothing for a prompt containing "silence".
FAKE_VLLM = textwrap.dedent(
    """
    from types import SimpleNamespace

    ENGINES = []
    ATTEMPTS = []

    class SamplingParams:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class LLM:
        def __init__(self, **kwargs):
            ATTEMPTS.append(kwargs)
            if kwargs.get("max_model_len") == 1:
                raise ValueError("max_model_len 1 is shorter than any prompt")
            self.kwargs = kwargs
            self.chats = []
            ENGINES.append(self)

        def chat(self, messages, sampling_params, use_tqdm=True):
            self.chats.append((messages, sampling_params, use_tqdm))
            outputs = []
            for conversation in messages:
                parts = conversation[-1]["content"]
                listed = parts if isinstance(parts, list) else []
                images = sum(p["type"] == "image_url" for p in listed)
                text = "" if "silence" in str(parts) else f"answer {images}"
                completion = SimpleNamespace(text=text, token_ids=[1, 2], finish_reason="stop")
                outputs.append(SimpleNamespace(prompt_token_ids=[0] * 10, outputs=[completion]))
            return outputs
    """
)


@pytest.fixture
def fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "fake" / "vllm").mkdir(parents=True)
    (tmp_path / "fake" / "vllm" / "__init__.py").write_text(FAKE_VLLM)
    monkeypatch.syspath_prepend(str(tmp_path / "fake"))
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    importlib.invalidate_caches()
    return tmp_path


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint directory as far as vidbench looks (the stand-in engine loads nothing)."""
    path = tmp_path_factory.mktemp("ckpt")
    (path / "config.json").write_text('{"model_type": "qwen2_vl"}')
    return path


def image(tag: bytes) -> ImagePart:
    return ImagePart(tag, "image/png")


def request(key: str, n_images: int, text: str = "Which?", **generation: float) -> Request:
    parts = (*(image(bytes([i])) for i in range(n_images)), TextPart(text))
    return Request(key, key, (Message("user", parts),), GenerationConfig(**generation))


def test_messages_become_openai_chat_with_data_urls() -> None:
    messages = (
        Message("system", (TextPart("Be brief."),)),
        Message("user", (image(b"one"), TextPart("and"), image(b"two"), TextPart("?"))),
    )
    converted = vllm_messages(messages)
    assert converted[0] == {"role": "system", "content": "Be brief."}
    parts = converted[1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text", "image_url", "text"]
    url = parts[2]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == b"two"


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
    [(conversations, params, use_tqdm)] = engine.chats  # one call for the whole batch
    assert len(conversations) == 4 and use_tqdm is False
    assert params[0].kwargs == {"temperature": 0.5, "top_p": 0.9, "max_tokens": 7, "seed": None}
    assert [r.text for r in responses[:3]] == ["answer 18", "answer 17", "answer 16"]
    assert responses[0].usage.input_tokens == 10 and responses[0].usage.output_tokens == 2
    assert responses[3].status == "empty"
    # a later request with more images than the engine was started for is an error, not a crash
    [too_many] = asyncio.run(model.generate([request("big", 20)]))
    assert too_many.status == "error" and "max_images=20" in (too_many.error or "")


def test_max_images_starts_the_engine_early(fake_vllm: Path, checkpoint: Path) -> None:
    model = load_model(f"vllm:{checkpoint}", ModelOptions(extra={"max_images": "32"}))
    asyncio.run(model.start())
    assert sys.modules["vllm"].ENGINES[-1].kwargs["limit_mm_per_prompt"] == {"image": 32}


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
    ],
)
def test_bad_settings_fail_early(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_model("vllm:org/model", ModelOptions(extra=extra))


def test_missing_checkpoint_is_named() -> None:
    with pytest.raises(ConfigError, match="no model directory at /nowhere/ckpt"):
        load_model("vllm:/nowhere/ckpt", ModelOptions())
