"""The torch side of the `hf:` backend: load a checkpoint, run one batch, decode it.

Everything here blocks (it owns the device) and runs in the backend's worker thread.
torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vidbench.core.requests import GenerationConfig, Request, Response, Usage
from vidbench.media.images import decode_image
from vidbench.models.hf_families import (
    Family,
    family_for,
    load_model_class,
    load_processor,
    to_chat,
)


@dataclass(frozen=True)
class Loaded:
    model: Any
    processor: Any
    family: Family
    device: str
    eos_ids: frozenset[int]


def pick_device(device: str) -> str:
    import torch

    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def load(
    source: str, device: str, dtype: str, padding_side: str = "left", attention: str = "default"
) -> Loaded:
    """The processor and the weights, loaded straight onto the device (no full CPU copy)."""
    import torch
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(source)
    family = family_for(getattr(config, "model_type", ""))
    processor = load_processor(source, config)
    processor.tokenizer.padding_side = padding_side
    model_class = load_model_class(family)
    torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
    target = pick_device(device)
    kwargs: dict[str, Any] = {_dtype_keyword(): torch_dtype, "device_map": target}
    if attention != "default":
        kwargs["attn_implementation"] = attention
    model = model_class.from_pretrained(source, **kwargs).eval()
    return Loaded(model, processor, family, target, eos_ids(model, processor))


def _dtype_keyword() -> str:
    """transformers took `torch_dtype` before 4.56 and `dtype` from then on."""
    import transformers
    from packaging.version import Version

    return "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"


def eos_ids(model: Any, processor: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (model.generation_config.eos_token_id, processor.tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(int(v) for v in value)
    return frozenset(ids)


def generation_settings(loaded: Loaded, generation: GenerationConfig) -> Any:
    """The model's generation config with our settings: greedy at temperature 0, else sampling
    with exactly the request's temperature and top_p (the checkpoint's top_k is switched off)."""
    settings = copy.deepcopy(loaded.model.generation_config)
    settings.max_new_tokens = generation.max_tokens
    if generation.temperature == 0:
        settings.do_sample = False
        settings.temperature = settings.top_p = settings.top_k = None
    else:
        settings.do_sample = True
        settings.temperature = generation.temperature
        settings.top_p = generation.top_p
        settings.top_k = None
    if settings.pad_token_id is None:
        settings.pad_token_id = loaded.processor.tokenizer.pad_token_id
    return settings


def encode_batch(loaded: Loaded, requests: Sequence[Request], processor: Any = None) -> Any:
    """Chat template + processor over a batch: one prompt per request, its images in order.
    `processor`: this thread's own copy (a fast tokenizer must not run in two threads at once:
    "Already borrowed"); default the loaded one."""
    processor = processor or loaded.processor
    prompts: list[str] = []
    images: list[list[Any]] = []
    for request in requests:
        conversation, parts = to_chat(request.messages)
        prompts.append(
            processor.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        )
        images.append([decode_image(p.data) for p in parts])
    kwargs: dict[str, Any] = {"text": prompts, "padding": True, "return_tensors": "pt"}
    if any(images):
        kwargs["images"] = images
    return processor(**kwargs)


@dataclass(frozen=True)
class PreparedBatch:
    """A batch ready for the device: its requests and the processor's tensors (on the CPU)."""

    requests: Sequence[Request]
    inputs: Any
    prepare_s: float


def prepare_batch(
    loaded: Loaded, requests: Sequence[Request], processor: Any = None
) -> PreparedBatch:
    """The CPU side of a batch (chat template, image decoding, processor): runs in the
    preparation pool, with the thread's own `processor`, while the device generates."""
    start = time.perf_counter()
    inputs = encode_batch(loaded, requests, processor)
    return PreparedBatch(requests, inputs, time.perf_counter() - start)


def run_batch(loaded: Loaded, requests: Sequence[Request]) -> list[Response]:
    """Prepare and generate one batch in this thread (no overlap)."""
    return generate_batch(loaded, prepare_batch(loaded, requests))


def generate_batch(loaded: Loaded, prepared: PreparedBatch) -> list[Response]:
    """Generate for a prepared batch of requests that share their generation settings."""
    import torch

    start = time.perf_counter()
    requests = prepared.requests
    inputs = prepared.inputs.to(loaded.device).to(loaded.model.dtype)
    generation = requests[0].generation
    if generation.seed is not None:
        torch.manual_seed(generation.seed)
    with torch.inference_mode():
        output = loaded.model.generate(
            **inputs, generation_config=generation_settings(loaded, generation)
        )
    latency = prepared.prepare_s + time.perf_counter() - start
    prompt_length = inputs["input_ids"].shape[1]
    prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
    responses = []
    for request, row, n_in in zip(
        requests, output[:, prompt_length:].tolist(), prompt_tokens, strict=True
    ):
        tokens = _until_eos(row, loaded.eos_ids)
        text = loaded.processor.tokenizer.decode(tokens, skip_special_tokens=True).strip()
        usage = Usage(int(n_in), len(tokens))
        if text:
            responses.append(Response(request.key, text, usage=usage, latency_s=latency))
        else:
            responses.append(
                Response(
                    request.key,
                    None,
                    error="the model returned no text",
                    usage=usage,
                    latency_s=latency,
                    status="empty",
                )
            )
    return responses


def _until_eos(tokens: list[int], eos_ids: frozenset[int]) -> list[int]:
    """The generated tokens up to and including the first end-of-sequence token."""
    for i, token in enumerate(tokens):
        if token in eos_ids:
            return tokens[: i + 1]
    return tokens
