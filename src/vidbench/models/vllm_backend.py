"""`vllm:REPO_OR_PATH`: vLLM's offline engine in this process, on its chat API.

    vidbench run 4dbench-qa --model vllm:Qwen/Qwen2-VL-7B-Instruct \\
        --model-opt tensor_parallel_size=2 --model-opt max_model_len=32768

Requests go to `LLM.chat` as OpenAI-style messages (images as base64 `data:` URLs in their
order), many at a time: vLLM batches them itself, so `batch_size` (default 64) is how many the
backend hands over per call. The engine starts on the first batch, with room for as many images
per prompt as that batch's largest request (or `max_images`, if larger); a later request with
more images is recorded as an error naming the setting.

Settings (`--model-opt`): batch_size, max_images, tensor_parallel_size, gpu_memory_utilization
(0..1), max_model_len, dtype (auto | float16 | bfloat16 | float32). vllm is imported only when
the engine starts; without it the spec stops with "pip install 'vidbench[vllm]'".
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.messages import Message
from vidbench.core.requests import Request, Response, Usage
from vidbench.extras import require
from vidbench.models.base import Model
from vidbench.models.batcher import DeviceBatcher
from vidbench.models.local_source import positive_int, resolve_source
from vidbench.models.registry import ModelOptions, reject_extra

OPTIONS = (
    "batch_size",
    "max_images",
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_model_len",
    "dtype",
)
DTYPES = ("auto", "float16", "bfloat16", "float32")
INSTALL_HINT = "pip install 'vidbench[vllm]'"


@dataclass(frozen=True)
class VLLMSettings:
    batch_size: int = 64
    max_images: int = 0  # 0: sized from the first batch
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None  # None: vLLM's default
    max_model_len: int | None = None
    dtype: str = "auto"


def parse_settings(spec: str, options: ModelOptions) -> VLLMSettings:
    reject_extra(spec, options, OPTIONS)
    extra = options.extra
    dtype = extra.get("dtype", "auto")
    if dtype not in DTYPES:
        raise ConfigError(f"{spec}: {options.flag} dtype={dtype!r}; use one of {', '.join(DTYPES)}")
    memory = extra.get("gpu_memory_utilization")
    fraction = None
    if memory is not None:
        try:
            fraction = float(memory)
        except ValueError:
            fraction = -1.0
        if not 0 < fraction <= 1:
            raise ConfigError(f"{spec}: {options.flag} gpu_memory_utilization={memory!r}: use 0..1")
    length = extra.get("max_model_len")
    return VLLMSettings(
        batch_size=positive_int(spec, options.flag, "batch_size", extra.get("batch_size", "64")),
        max_images=positive_int(spec, options.flag, "max_images", extra["max_images"])
        if "max_images" in extra
        else 0,
        tensor_parallel_size=positive_int(
            spec, options.flag, "tensor_parallel_size", extra.get("tensor_parallel_size", "1")
        ),
        gpu_memory_utilization=fraction,
        max_model_len=None
        if length is None
        else positive_int(spec, options.flag, "max_model_len", length),
        dtype=dtype,
    )


def vllm_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages -> the OpenAI chat format vLLM's `LLM.chat` takes (images as data URLs)."""
    from vidbench.models.openai_backend import chat_messages

    return chat_messages(messages)


def engine_arguments(source: str, settings: VLLMSettings, images: int, seed: int) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "model": source,
        "tensor_parallel_size": settings.tensor_parallel_size,
        "dtype": settings.dtype,
        "seed": seed,
        "limit_mm_per_prompt": {"image": max(images, 1)},
    }
    if settings.gpu_memory_utilization is not None:
        arguments["gpu_memory_utilization"] = settings.gpu_memory_utilization
    if settings.max_model_len is not None:
        arguments["max_model_len"] = settings.max_model_len
    return arguments


def image_count(request: Request) -> int:
    return sum(len(m.images) for m in request.messages)


class VLLMModel(Model):
    start_when_needed = True  # loading weights is costly: only when a request needs them

    def __init__(self, spec: str, source: str, settings: VLLMSettings, seed: int = 0) -> None:
        self.spec = spec
        self.source = source
        self.settings = settings
        self.seed = seed
        self.batch_size = settings.batch_size
        self._engine: Any = None
        self._engine_error: ConfigError | None = None
        self._max_images = 0
        self._lock = threading.Lock()
        # vLLM takes per-request sampling settings: any requests may share a batch
        self._batcher = DeviceBatcher(self._run_batch, settings.batch_size, lambda r: None)

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "dtype": self.settings.dtype}

    def engine(self, images: int) -> Any:
        """The vLLM engine, started on first use with room for `images` images per prompt."""
        with self._lock:
            if self._engine is None and self._engine_error is None:
                self._max_images = max(images, self.settings.max_images)
                arguments = engine_arguments(
                    self.source, self.settings, self._max_images, self.seed
                )
                try:
                    from vllm import LLM

                    self._engine = LLM(**arguments)
                except ImportError as e:
                    self._engine_error = ConfigError(
                        f"{self.spec}: vllm cannot be imported ({e}): {INSTALL_HINT}"
                    )
                except Exception as e:  # a failed start is not retried for every batch
                    self._engine_error = ConfigError(f"{self.spec}: vLLM did not start: {e}")
            if self._engine_error is not None:
                raise self._engine_error
            return self._engine

    async def start(self) -> None:
        if self.settings.max_images:  # the image budget is known: start the engine now
            await asyncio.to_thread(self.engine, self.settings.max_images)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return await self._batcher.submit(requests)

    def _run_batch(self, requests: Sequence[Request]) -> list[Response]:
        llm = self.engine(max(image_count(r) for r in requests))  # imports vllm on first use
        from vllm import SamplingParams

        answers: dict[str, Response] = {}
        runnable = []
        for request in requests:
            n = image_count(request)
            if n > self._max_images:
                answers[request.key] = Response(
                    request.key,
                    None,
                    error=f"the request has {n} images; the vLLM engine was started for at most "
                    f"{self._max_images} (set --model-opt max_images={n})",
                )
            else:
                runnable.append(request)
        if runnable:
            start = time.perf_counter()
            outputs = llm.chat(
                [vllm_messages(r.messages) for r in runnable],
                [sampling(SamplingParams, r) for r in runnable],
                use_tqdm=False,
            )
            latency = time.perf_counter() - start
            for request, output in zip(runnable, outputs, strict=True):
                answers[request.key] = read_output(request.key, output, latency)
        return [answers[r.key] for r in requests]


def sampling(params_class: Any, request: Request) -> Any:
    g = request.generation
    return params_class(
        temperature=g.temperature, top_p=g.top_p, max_tokens=g.max_tokens, seed=g.seed
    )


def read_output(key: str, output: Any, latency: float) -> Response:
    """A vLLM RequestOutput -> Response (empty text is recorded as such)."""
    completion = output.outputs[0]
    usage = Usage(len(output.prompt_token_ids or ()), len(completion.token_ids or ()))
    text = completion.text
    if not text or not text.strip():
        error = f"the model returned no text (finish_reason={completion.finish_reason})"
        return Response(key, None, error=error, usage=usage, latency_s=latency, status="empty")
    return Response(key, text, usage=usage, latency_s=latency)


def build(arg: str, options: ModelOptions) -> VLLMModel:
    spec = f"vllm:{arg}"
    settings = parse_settings(spec, options)
    require(f"model {spec!r}", ("vllm",), "vllm")
    return VLLMModel(spec, resolve_source(spec, arg), settings, options.seed)
