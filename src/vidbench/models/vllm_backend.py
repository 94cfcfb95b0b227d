"""`vllm:REPO_OR_PATH`: vLLM's offline engine in this process.

    vidbench run 4dbench-qa --model vllm:Qwen/Qwen2-VL-7B-Instruct \\
        --model-opt tensor_parallel_size=2 --model-opt max_model_len=32768

Requests go to `LLM.generate` as a prompt written with the checkpoint's chat template and the
frames apart (`multi_modal_data`: images, or clips for a video input), many at a time: vLLM
batches them itself, so `batch_size` (default 64) is how many the backend hands over per call.
The frames reach the model as the checkpoint's family takes them (`hf_families.py`,
`vllm_inputs.py`), the same as under `hf:`. The engine starts on the first batch, with room for
as many images (or videos) per prompt as that batch's largest request, or `max_images`
(`max_videos`) if larger; a later request with more is recorded as an error naming the setting.

Settings (`--model-opt`): batch_size, max_images, max_videos, tensor_parallel_size,
gpu_memory_utilization (0..1), max_model_len, dtype (auto | float16 | bfloat16 | float32),
frame_input (images | video), trust_remote_code (true | false: a checkpoint that ships its own
code is refused without it). vllm is imported only when the engine starts; without it the spec
stops with "pip install 'vidbench[vllm]'".
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response, Usage, stopped_at_token_limit
from vidbench.extras import require
from vidbench.models.batcher import DeviceBatcher
from vidbench.models.call_errors import no_text
from vidbench.models.device_model import DeviceModel
from vidbench.models.hf_checkpoint import Checkpoint, inspect_checkpoint
from vidbench.models.hf_families import IMAGES, FrameInput, choose_frame_input
from vidbench.models.local_source import positive_int, resolve_source, true_or_false
from vidbench.models.registry import ModelOptions, reject_extra
from vidbench.models.retry import CHANGE_ENGINE, CHANGE_FRAMES, rejected
from vidbench.models.vllm_inputs import PromptBuilder, PromptInputs, sampling_arguments

OPTIONS = (
    "batch_size",
    "max_images",
    "max_videos",
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_model_len",
    "dtype",
    "frame_input",
    "trust_remote_code",
)
DTYPES = ("auto", "float16", "bfloat16", "float32")
INSTALL_HINT = "pip install 'vidbench[vllm]'"


@dataclass(frozen=True)
class VLLMSettings:
    batch_size: int = 64
    max_images: int = 0  # 0: sized from the first batch
    max_videos: int = 0
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None  # None: vLLM's default
    max_model_len: int | None = None
    dtype: str = "auto"
    frames: FrameInput = IMAGES
    trust_remote_code: bool = False

    def max_media(self) -> int:
        """The per-prompt room asked for the modality the frames go as (0: from the batch)."""
        return self.max_videos if self.frames.kind == "video" else self.max_images


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
        max_videos=positive_int(spec, options.flag, "max_videos", extra["max_videos"])
        if "max_videos" in extra
        else 0,
        tensor_parallel_size=positive_int(
            spec, options.flag, "tensor_parallel_size", extra.get("tensor_parallel_size", "1")
        ),
        gpu_memory_utilization=fraction,
        max_model_len=None
        if length is None
        else positive_int(spec, options.flag, "max_model_len", length),
        dtype=dtype,
        trust_remote_code=true_or_false(
            spec, options.flag, "trust_remote_code", extra.get("trust_remote_code")
        ),
    )


def engine_arguments(
    source: str, settings: VLLMSettings, media: int, seed: int, modality: str = "image"
) -> dict[str, Json]:
    """vLLM's LLM(...) arguments: room for `media` items of `modality` per prompt."""
    arguments: dict[str, Json] = {
        "model": source,
        "tensor_parallel_size": settings.tensor_parallel_size,
        "dtype": settings.dtype,
        "seed": seed,
        "limit_mm_per_prompt": {modality: max(media, 1)},
        "trust_remote_code": settings.trust_remote_code,
    }
    if settings.gpu_memory_utilization is not None:
        arguments["gpu_memory_utilization"] = settings.gpu_memory_utilization
    if settings.max_model_len is not None:
        arguments["max_model_len"] = settings.max_model_len
    return arguments


def prompt_builder(checkpoint: Checkpoint, frames: FrameInput) -> PromptBuilder:
    """The checkpoint's chat template (its processor, on the CPU) and frame handling."""
    from transformers import AutoConfig

    from vidbench.models.hf_checkpoint import load_processor

    trust = checkpoint.own_code
    config = AutoConfig.from_pretrained(checkpoint.source, trust_remote_code=trust)
    processor = load_processor(checkpoint, config, with_video=frames.kind == "video")
    return PromptBuilder(processor, checkpoint.family, frames)


class VLLMModel(DeviceModel[VLLMSettings]):
    checkpoint: Checkpoint  # always inspected by build()

    def __init__(
        self,
        spec: str,
        source: str,
        settings: VLLMSettings,
        checkpoint: Checkpoint,
        seed: int = 0,
    ) -> None:
        super().__init__(spec, source, settings, checkpoint)
        self.seed = seed
        self._engine: Any = None
        self._engine_error: ConfigError | None = None
        self._builder: PromptBuilder | None = None
        self._max_media = 0
        self._lock = threading.Lock()
        # vLLM takes per-request sampling settings: any requests may share a batch
        self._batcher = DeviceBatcher(self._run_batch, settings.batch_size, lambda r: None)

    def identity(self) -> dict[str, Json]:
        return {
            "spec": self.spec_key,
            "weights": self.checkpoint.weights,
            "dtype": self.settings.dtype,
            **self.settings.frames.identity(),
            "trust_remote_code": self.settings.trust_remote_code,
        }

    def builder(self) -> PromptBuilder:
        """The prompt builder, loaded once (the processor's chat template, on the CPU)."""
        with self._lock:
            if self._builder is None:
                try:
                    self._builder = prompt_builder(self.checkpoint, self.settings.frames)
                except Exception as e:  # no chat template to write prompts with: stop the run
                    raise ConfigError(f"{self.spec}: cannot load its processor: {e}") from e
            return self._builder

    def engine(self, media: int) -> Any:
        """The vLLM engine, started on first use with room for `media` images (or videos, as
        the frames go) per prompt."""
        with self._lock:
            if self._engine is None and self._engine_error is None:
                self._max_media = max(media, self.settings.max_media())
                modality = "video" if self.settings.frames.kind == "video" else "image"
                arguments = engine_arguments(
                    self.source, self.settings, self._max_media, self.seed, modality
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
        await asyncio.to_thread(self.builder)  # a checkpoint without a processor stops here
        if self.settings.max_media():  # the media budget is known: start the engine now
            await asyncio.to_thread(self.engine, self.settings.max_media())

    def _run_batch(self, requests: Sequence[Request]) -> list[Response]:
        builder = self.builder()
        counts = {r.key: builder.media_count(r) for r in requests}
        llm = self.engine(max(counts.values()))  # imports vllm on first use
        answers: dict[str, Response] = {}
        runnable, inputs = [], []
        for request in requests:
            problem = builder.problem(request)
            room = self._room_problem(counts[request.key])
            if problem is not None or room is not None:  # the same on every run: a change first
                change = CHANGE_FRAMES if problem is not None else CHANGE_ENGINE
                answers[request.key] = rejected(request.key, problem or str(room), change)
                continue
            try:
                inputs.append(builder.build(request))
                runnable.append(request)
            except Exception as e:  # one unreadable request does not sink the batch
                answers[request.key] = Response(request.key, None, error=f"{type(e).__name__}: {e}")
        if runnable:
            answers.update(self._generate(llm, runnable, inputs))
        return [answers[r.key] for r in requests]

    def _generate(
        self, llm: Any, requests: Sequence[Request], inputs: Sequence[PromptInputs]
    ) -> dict[str, Response]:
        """vLLM's answers to the batch. vLLM refuses a whole call for one prompt it rejects (one
        longer than max_model_len): then each is asked alone, so only that one fails."""
        from vllm import SamplingParams

        start = time.perf_counter()
        try:
            outputs = llm.generate(
                list(inputs),
                [SamplingParams(**sampling_arguments(r)) for r in requests],
                use_tqdm=False,
            )
        except Exception as e:
            if len(requests) == 1:
                return {requests[0].key: Response(requests[0].key, None, error=f"vLLM: {e}")}
            answers: dict[str, Response] = {}
            for request, one in zip(requests, inputs, strict=True):
                answers.update(self._generate(llm, [request], [one]))
            return answers
        latency = time.perf_counter() - start
        return {
            request.key: read_output(request.key, output, latency)
            for request, output in zip(requests, outputs, strict=True)
        }

    def _room_problem(self, n: int) -> str | None:
        if n <= self._max_media:
            return None
        key = "max_videos" if self.settings.frames.kind == "video" else "max_images"
        noun = "videos" if key == "max_videos" else "images"
        return (
            f"the request has {n} {noun}; the vLLM engine was started for at most "
            f"{self._max_media} (set --model-opt {key}={n})"
        )


def read_output(key: str, output: Any, latency: float) -> Response:
    """A vLLM RequestOutput -> Response (empty text is recorded as such)."""
    completion = output.outputs[0]
    usage = Usage(len(output.prompt_token_ids or ()), len(completion.token_ids or ()))
    text = completion.text
    if not text or not text.strip():
        error = no_text("finish_reason", completion.finish_reason)
        return Response(key, None, error=error, usage=usage, latency_s=latency, status="empty")
    truncated = stopped_at_token_limit(completion.finish_reason)
    return Response(key, text, usage=usage, latency_s=latency, truncated=truncated)


def build(arg: str, options: ModelOptions) -> VLLMModel:
    spec = f"vllm:{arg}"
    settings = parse_settings(spec, options)
    require(f"model {spec!r}", ("vllm",), "vllm")
    source = resolve_source(spec, arg)
    checkpoint = inspect_checkpoint(spec, source, settings.trust_remote_code, options.flag)
    frames = choose_frame_input(
        spec, options.flag, checkpoint.family, options.extra.get("frame_input")
    )
    return VLLMModel(spec, source, replace(settings, frames=frames), checkpoint, options.seed)
