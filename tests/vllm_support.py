"""A stand-in `vllm` package for the backend tests (the `fake_vllm` fixture; a pytest plugin)."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

# A stand-in for the `vllm` package: records the engine arguments and generate calls, answers
# "answer <n images or videos>", or nothing for a prompt containing "silence"; as vLLM, refuses
# the whole call when one prompt is longer than the engine's max_model_len ("too long" here).
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
            self.calls = []
            ENGINES.append(self)

        def generate(self, prompts, sampling_params, use_tqdm=True):
            self.calls.append((prompts, sampling_params, use_tqdm))
            for prompt in prompts:
                if "too long" in prompt["prompt"]:
                    raise ValueError(
                        "The decoder prompt (length 40000) is longer than the maximum model "
                        "length of 32768"
                    )
            outputs = []
            for prompt in prompts:
                media = prompt.get("multi_modal_data", {})
                n = sum(len(items) for items in media.values())
                text = "" if "silence" in prompt["prompt"] else f"answer {n}"
                completion = SimpleNamespace(text=text, token_ids=[1, 2], finish_reason="stop")
                outputs.append(SimpleNamespace(prompt_token_ids=[0] * 10, outputs=[completion]))
            return outputs
    """
)


@pytest.fixture
def fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "fake" / "vllm").mkdir(parents=True)
    (tmp_path / "fake" / "vllm" / "__init__.py").write_text(FAKE_VLLM)
    monkeypatch.syspath_prepend(str(tmp_path / "fake"))
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop("vllm", None)  # the stand-in goes with the test (tests after it see none)
