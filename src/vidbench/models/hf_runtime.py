"""The torch side of the `hf:` backend: load a checkpoint, run one batch, decode it.

Everything here blocks (it owns the device) and runs in the backend's worker thread.
torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vidbench.core.requests import GenerationConfig, Request, Response, Usage
from vidbench.media.images import decode_image
from vidbench.models.hf_checkpoint import (
    Checkpoint,
    load_processor,
    own_model_class,
    tokenizer_of,
)
from vidbench.models.hf_families import IMAGES, Family, FrameInput, load_model_class
from vidbench.models.hf_inputs import clip_array, media_problem, prompt_text, to_chat
from vidbench.models.retry import CHANGE_FRAMES, no_room, rejected

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image


@dataclass(frozen=True)
class LoadedModel:
    model: Any
    processor: Any
    family: Family
    device: str
    eos_ids: frozenset[int]
    frames: FrameInput = IMAGES
    context: int | None = None  # tokens one sequence holds (max_position_embeddings)


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
    checkpoint: Checkpoint,
    frames: FrameInput,
    device: str,
    dtype: str,
    padding_side: str = "left",
    attention: str = "default",
) -> LoadedModel:
    """The processor and the weights, loaded straight onto the device (no full CPU copy)."""
    import torch
    from transformers import AutoConfig

    trust = checkpoint.own_code
    config = AutoConfig.from_pretrained(checkpoint.source, trust_remote_code=trust)
    if checkpoint.own_code:
        model_class = own_model_class(checkpoint)
    else:
        model_class = load_model_class(checkpoint.family)
    processor = load_processor(checkpoint, config, with_video=frames.kind == "video")
    tokenizer_of(processor).padding_side = padding_side
    torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
    target = pick_device(device)
    # keywords of from_pretrained (untyped), one of whose names depends on the version
    kwargs: dict[str, object] = {_dtype_keyword(): torch_dtype, "device_map": target}
    if attention != "default":
        kwargs["attn_implementation"] = attention
    if trust:
        kwargs["trust_remote_code"] = True
    model = model_class.from_pretrained(checkpoint.source, **kwargs).eval()
    eos = eos_ids(model, processor)
    context = context_length(model)
    return LoadedModel(model, processor, checkpoint.family, target, eos, frames, context)


def context_length(model: Any) -> int | None:
    """The tokens one sequence of the model holds (its text model's max_position_embeddings;
    None when its config does not say)."""
    value = getattr(model.config.get_text_config(), "max_position_embeddings", None)
    return value if isinstance(value, int) and value > 0 else None


def _dtype_keyword() -> str:
    """transformers took `torch_dtype` before 4.56 and `dtype` from then on."""
    import transformers
    from packaging.version import Version

    return "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"


def eos_ids(model: Any, processor: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (model.generation_config.eos_token_id, tokenizer_of(processor).eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(int(v) for v in value)
    return frozenset(ids)


def generation_settings(
    loaded: LoadedModel, generation: GenerationConfig, max_new_tokens: int
) -> Any:
    """The model's generation config with our settings: greedy at temperature 0, else sampling
    with exactly the request's temperature and top_p (the checkpoint's top_k is switched off);
    at most `max_new_tokens` (the request's max_tokens, or less where the context ends)."""
    settings = copy.deepcopy(loaded.model.generation_config)
    settings.max_new_tokens = max_new_tokens
    if generation.temperature == 0:
        settings.do_sample = False
        settings.temperature = settings.top_p = settings.top_k = None
    else:
        settings.do_sample = True
        settings.temperature = generation.temperature
        settings.top_p = generation.top_p
        settings.top_k = None
    if settings.pad_token_id is None:
        settings.pad_token_id = tokenizer_of(loaded.processor).pad_token_id
    return settings


def encode_batch(loaded: LoadedModel, requests: Sequence[Request], processor: Any = None) -> Any:
    """Chat template + processor over a batch: one prompt per request, its frames in order, as
    images or as clips of the model's video input. `processor`: this thread's own copy (a fast
    tokenizer must not run in two threads at once: "Already borrowed"); default the loaded one."""
    processor = processor or loaded.processor
    prompts: list[str] = []
    images: list[list[Image.Image]] = []
    clips: list[np.ndarray] = []
    for request in requests:
        chat = to_chat(request.messages, loaded.frames.kind)
        prompts.append(prompt_text(processor, loaded.family, chat))
        images.append([decode_image(p.data) for p in chat.images])
        clips.extend(clip_array(clip) for clip in chat.clips)
    # the processor's keywords (untyped); the videos' keyword is the family's
    kwargs: dict[str, object] = {"text": prompts, "padding": True, "return_tensors": "pt"}
    if any(images):
        kwargs["images"] = images
    if clips:
        kwargs[loaded.family.video_argument] = clips
        if loaded.family.video_argument == "videos":  # the FrameSpec chose the frames: the
            kwargs["do_sample_frames"] = False  # video processor must not sample them again
    return processor(**kwargs)


@dataclass(frozen=True)
class Part:
    """Requests the device generates for together, with the processor's tensors (on the CPU)."""

    requests: Sequence[Request]
    inputs: Any


@dataclass(frozen=True)
class PreparedBatch:
    """A batch ready for the device: its requests, those the model takes in the `parts` the
    device generates, and an error response for each of the others."""

    requests: Sequence[Request]
    prepare_s: float
    parts: Sequence[Part] = ()
    refused: dict[str, Response] = field(default_factory=dict)


def prepare_batch(
    loaded: LoadedModel, requests: Sequence[Request], processor: Any = None
) -> PreparedBatch:
    """The CPU side of a batch (chat template, image decoding, processor): runs in the
    preparation pool, with the thread's own `processor`, while the device generates. A request
    whose frames the model cannot take (a clip of another length than its video input's) is
    answered with an error naming why, and so is one whose prompt fills the model's context
    (its answer would come from positions the model never learned); the rest of the batch goes
    on."""
    start = time.perf_counter()
    accepted: list[Request] = []
    refused: dict[str, Response] = {}
    for request in requests:
        chat = to_chat(request.messages, loaded.frames.kind)
        problem = media_problem(loaded.family, loaded.frames, chat)
        if problem is None:
            accepted.append(request)
        else:
            refused[request.key] = rejected(request.key, problem, CHANGE_FRAMES)
    inputs, accepted, failed = _encode_apart(loaded, accepted, processor)
    refused.update(failed)
    too_long = _too_long(loaded, accepted, inputs)
    refused.update(too_long)
    parts = _by_room(loaded, accepted, inputs, set(too_long), processor)
    return PreparedBatch(requests, time.perf_counter() - start, parts, refused)


def _by_room(
    loaded: LoadedModel, encoded: list[Request], inputs: Any, left_out: set[str], processor: Any
) -> list[Part]:
    """The `encoded` requests (the rows of `inputs`) but those `left_out`, in the parts the
    device generates: together those whose prompt leaves room for max_tokens in the model's
    context, and alone each that does not (one max_new_tokens holds for a whole batch: such a
    prompt's room would end every answer of its batch early, its length hanging on which
    requests happened to share the batch)."""
    requests = [r for r in encoded if r.key not in left_out]
    if not requests:
        return []
    near_end: list[Request] = []
    if loaded.context is not None:
        max_tokens = requests[0].generation.max_tokens  # a batch shares its generation settings
        rows = inputs["attention_mask"].sum(dim=1).tolist()
        length = {r.key: n for r, n in zip(encoded, rows, strict=True)}
        near_end = [r for r in requests if length[r.key] + max_tokens > loaded.context]
    alone = {r.key for r in near_end}
    roomy = [r for r in requests if r.key not in alone]
    if len(roomy) == len(encoded) or len(near_end) == len(encoded) == 1:
        return [Part(encoded, inputs)]  # as encoded: nothing to take out
    groups = ([roomy] if roomy else []) + [[r] for r in near_end]
    return [Part(group, encode_batch(loaded, group, processor)) for group in groups]


def _too_long(loaded: LoadedModel, requests: list[Request], inputs: Any) -> dict[str, Response]:
    """A refusal for each encoded request whose prompt leaves no room in the model's context."""
    if inputs is None or loaded.context is None:
        return {}
    refused = {}
    lengths = inputs["attention_mask"].sum(dim=1).tolist()
    for request, length in zip(requests, lengths, strict=True):
        if length >= loaded.context:
            holds = f"the model's context holds {loaded.context} (max_position_embeddings)"
            refused[request.key] = no_room(request.key, length, holds, CHANGE_FRAMES)
    return refused


def _encode_apart(
    loaded: LoadedModel, requests: list[Request], processor: Any
) -> tuple[Any, list[Request], dict[str, Response]]:
    """The processor's tensors for `requests`, those it took, and an error response for each it
    failed on: when it fails for the batch (an image it cannot resize fails the whole call),
    each request is encoded alone, so only the ones at fault fail, and the rest together."""
    if not requests:
        return None, [], {}
    try:
        return encode_batch(loaded, requests, processor), requests, {}
    except Exception:
        taken: list[Request] = []
        failed: dict[str, Response] = {}
        for request in requests:
            try:
                encode_batch(loaded, [request], processor)
                taken.append(request)
            except Exception as e:  # this request's own fault, the same on every run
                failed[request.key] = Response(request.key, None, error=f"{type(e).__name__}: {e}")
        inputs = encode_batch(loaded, taken, processor) if taken else None
        return inputs, taken, failed


# what a request the device has no memory for says, and what to change first
OUT_OF_MEMORY = "the device ran out of memory for this request alone"
CHANGE_SIZE = (
    "the request's size (fewer or smaller frames, a lower --max-tokens) or the weights' "
    "(--model-opt dtype=bfloat16)"
)


def generate_batch(loaded: LoadedModel, prepared: PreparedBatch) -> list[Response]:
    """Generate for a prepared batch of requests that share their generation settings; the
    refused ones keep their error responses, in request order."""
    answers = dict(prepared.refused)
    for part in prepared.parts:
        answers.update(_generate_in_memory(loaded, part.requests, part.inputs, prepared.prepare_s))
    return [answers[r.key] for r in prepared.requests]


def _generate_in_memory(
    loaded: LoadedModel, requests: Sequence[Request], inputs: Any, prepare_s: float
) -> dict[str, Response]:
    """The answers of `requests` (encoded as `inputs`); when the device runs out of memory, its
    memory is freed and each half of them asked apart, down to one request, which is rejected
    if it does not fit alone: what to change is the request's size, not the batch's."""
    import torch

    try:
        return _generate(loaded, requests, inputs, prepare_s)
    except torch.cuda.OutOfMemoryError:  # torch.OutOfMemoryError from torch 2.5 on
        pass  # out of the handler first: its traceback holds the failed batch's tensors
    if str(loaded.device).startswith("cuda"):
        torch.cuda.empty_cache()
    if len(requests) == 1:
        return {requests[0].key: rejected(requests[0].key, OUT_OF_MEMORY, CHANGE_SIZE)}
    half = len(requests) // 2
    answers: dict[str, Response] = {}
    for part in (requests[:half], requests[half:]):
        answers.update(_generate_in_memory(loaded, part, encode_batch(loaded, part), prepare_s))
    return answers


def _generate(
    loaded: LoadedModel, requests: Sequence[Request], cpu_inputs: Any, prepare_s: float
) -> dict[str, Response]:
    import torch

    start = time.perf_counter()
    inputs = cpu_inputs.to(loaded.device).to(loaded.model.dtype)
    generation = requests[0].generation
    prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
    max_new_tokens = generation.max_tokens
    if loaded.context is not None:  # a prompt near the context's end is generated alone
        max_new_tokens = min(max_new_tokens, loaded.context - int(max(prompt_tokens)))
    if generation.seed is not None:
        torch.manual_seed(generation.seed)
    with torch.inference_mode():
        output = loaded.model.generate(
            **inputs, generation_config=generation_settings(loaded, generation, max_new_tokens)
        )
    latency = prepare_s + time.perf_counter() - start
    prompt_length = inputs["input_ids"].shape[1]
    tokenizer = tokenizer_of(loaded.processor)
    responses = {}
    for request, row, n_in in zip(
        requests, output[:, prompt_length:].tolist(), prompt_tokens, strict=True
    ):
        tokens = _until_eos(row, loaded.eos_ids)
        text = tokenizer.decode(tokens, skip_special_tokens=True).strip()
        usage = Usage(int(n_in), len(tokens))
        # no end of sequence within max_tokens (or the context): generation stopped at the limit
        truncated = len(tokens) >= max_new_tokens and not set(tokens) & loaded.eos_ids
        if text:
            responses[request.key] = Response(
                request.key, text, usage=usage, latency_s=latency, truncated=truncated
            )
        else:
            responses[request.key] = Response(
                request.key,
                None,
                error="the model returned no text",
                usage=usage,
                latency_s=latency,
                status="empty",
            )
    return responses


def _until_eos(tokens: list[int], eos_ids: frozenset[int]) -> list[int]:
    """The generated tokens up to and including the first end-of-sequence token."""
    for i, token in enumerate(tokens):
        if token in eos_ids:
            return tokens[: i + 1]
    return tokens
