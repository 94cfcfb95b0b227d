"""`hf:REPO_OR_PATH`: a local vision-language model on transformers.

    vidbench run 4dbench-qa --model hf:Qwen/Qwen2-VL-7B-Instruct \\
        --model-opt device=cuda --model-opt dtype=bfloat16 --model-opt batch_size=8

Settings (`--model-opt`): device = auto | cpu | cuda | cuda:N | mps (auto: the first GPU, else
the CPU), dtype = auto | float32 | bfloat16 | float16 (auto: the checkpoint's), batch_size = N
(default 1), padding_side = left | right (default left; right in batches only for an
encoder-decoder language model), attention = default | eager | sdpa |
flash_attention_2, frame_input = images | video (default: the family's, `hf_families.py`),
trust_remote_code = true | false (default false: a checkpoint that ships its own code is refused;
true runs that code on this machine, `hf_checkpoint.py`). Greedy decoding at temperature 0,
else sampling with the task's temperature and top_p; max_new_tokens is the task's max_tokens; a
generation seed seeds torch before each batch.

Batches are prepared (chat template, images, processor) in a pool of threads while the device
generates the previous one (models/batcher.py); the device's share of the time is in the run's
results (`timing`). On GPUs batched generation is not bitwise batch-invariant (padding and
kernel choices change the floating-point sums), so batch size, padding side, dtype, attention
and device type are part of the identity: a run never mixes answers of two settings, and
`batch_size=1` is the batch-invariant mode. How the frames reach the model (images or clips of
its video input, and the clip length where the model's is fixed) and trust_remote_code are in the
identity too, and which files the checkpoint is (`weights`, hf_checkpoint.files_version):
weights saved over a folder's in place are another model.

The spec is checked when the model is built (extra installed, directory or cached hub id, its
config.json: family, frame input, own code); the weights load once, on `start()` or the first
batch, in the worker thread that runs every batch.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response
from vidbench.core.threads import in_own_thread
from vidbench.extras import require
from vidbench.models.batcher import DeviceBatcher
from vidbench.models.device_model import DeviceModel
from vidbench.models.hf_checkpoint import Checkpoint, decoder_only, inspect_checkpoint
from vidbench.models.hf_families import IMAGES, FrameInput, choose_frame_input
from vidbench.models.local_source import positive_int, resolve_source, true_or_false
from vidbench.models.registry import ModelOptions, reject_extra

OPTIONS = (
    "device",
    "dtype",
    "batch_size",
    "padding_side",
    "attention",
    "frame_input",
    "trust_remote_code",
)
DTYPES = ("auto", "float32", "bfloat16", "float16")
PADDING_SIDES = ("left", "right")
ATTENTION = ("default", "eager", "sdpa", "flash_attention_2")


@dataclass(frozen=True)
class HFSettings:
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 1
    padding_side: str = "left"
    attention: str = "default"
    frames: FrameInput = IMAGES
    trust_remote_code: bool = False


def parse_settings(spec: str, options: ModelOptions) -> HFSettings:
    reject_extra(spec, options, OPTIONS)
    extra = options.extra
    device = extra.get("device", "auto")
    if not (device in ("auto", "cpu", "cuda", "mps") or _is_cuda_index(device)):
        raise ConfigError(
            f"{spec}: {options.flag} device={device!r}; use auto, cpu, cuda, cuda:N, mps"
        )
    dtype = extra.get("dtype", "auto")
    if dtype not in DTYPES:
        raise ConfigError(f"{spec}: {options.flag} dtype={dtype!r}; use one of {', '.join(DTYPES)}")
    padding_side = extra.get("padding_side", "left")
    if padding_side not in PADDING_SIDES:
        raise ConfigError(
            f"{spec}: {options.flag} padding_side={padding_side!r}; use left or right"
        )
    attention = extra.get("attention", "default")
    if attention not in ATTENTION:
        raise ConfigError(
            f"{spec}: {options.flag} attention={attention!r}; use one of {', '.join(ATTENTION)}"
        )
    batch_size = positive_int(spec, options.flag, "batch_size", extra.get("batch_size", "1"))
    trust = true_or_false(spec, options.flag, "trust_remote_code", extra.get("trust_remote_code"))
    return HFSettings(device, dtype, batch_size, padding_side, attention, trust_remote_code=trust)


def _is_cuda_index(device: str) -> bool:
    kind, _, index = device.partition(":")
    return kind == "cuda" and index.isdigit()


class HFModel(DeviceModel[HFSettings]):
    """Batches of requests run on one device, one batch at a time (see DeviceBatcher)."""

    def __init__(
        self, spec: str, source: str, settings: HFSettings, checkpoint: Checkpoint
    ) -> None:
        super().__init__(spec, source, settings, checkpoint)
        self._loaded: Any = None
        self._load_error: ConfigError | None = None
        self._load_lock = threading.Lock()
        self._batcher = DeviceBatcher(
            self._generate_batch,
            settings.batch_size,
            prepare=self._prepare_batch,
            leave_when_cancelled=True,  # Ctrl-C does not wait for a batch on the device
        )
        self._per_thread = threading.local()  # each preparation thread's own processor

    def identity(self) -> dict[str, Json]:
        """What decides the answers besides the request. On GPUs that includes how requests are
        batched (not bitwise batch-invariant), so batch size and padding are keys too."""
        return {
            "spec": self.spec_key,
            "weights": self.checkpoint.weights,
            "dtype": self.settings.dtype,
            "batch_size": self.settings.batch_size,
            "padding_side": self.settings.padding_side,
            "attention": self.settings.attention,
            "device_type": self._device_type(),
            **self.settings.frames.identity(),
            "trust_remote_code": self.settings.trust_remote_code,
        }

    def _device_type(self) -> str:
        device = self.settings.device
        if device == "auto":
            from vidbench.models.hf_runtime import pick_device

            device = pick_device("auto")
        return device.partition(":")[0]

    def timing(self) -> dict[str, float | int]:
        return self._batcher.timing.as_dict()

    def load(self) -> Any:
        """Load the processor and weights once (blocking); later calls return them."""
        with self._load_lock:
            if self._loaded is None and self._load_error is None:
                from vidbench.models import hf_runtime

                try:
                    self._loaded = hf_runtime.load(
                        self.checkpoint,
                        self.settings.frames,
                        self.settings.device,
                        self.settings.dtype,
                        self.settings.padding_side,
                        self.settings.attention,
                    )
                except Exception as e:  # a load failure is a configuration error: keep it
                    self._load_error = ConfigError(f"{self.spec}: cannot load {self.source}: {e}")
            if self._load_error is not None:
                raise self._load_error
            return self._loaded

    async def start(self) -> None:
        await in_own_thread(self.load)  # Ctrl-C does not wait for the weights

    def _prepare_batch(self, requests: Sequence[Request]) -> Any:
        from vidbench.models import hf_runtime

        loaded = self.load()
        processor = getattr(self._per_thread, "processor", None)
        if processor is None:  # a fast tokenizer is not safe to share between threads
            processor = self._per_thread.processor = copy.deepcopy(loaded.processor)
        return hf_runtime.prepare_batch(loaded, requests, processor)

    def _generate_batch(self, prepared: Any) -> list[Response]:
        from vidbench.models import hf_runtime

        return hf_runtime.generate_batch(self.load(), prepared)

    async def aclose(self) -> None:
        self._batcher.close()
        loaded, self._loaded = self._loaded, None
        if loaded is not None and str(loaded.device).startswith("cuda"):
            import torch

            del loaded
            torch.cuda.empty_cache()


def build(arg: str, options: ModelOptions) -> HFModel:
    spec = f"hf:{arg}"
    settings = parse_settings(spec, options)
    require(f"model {spec!r}", ("torch", "transformers"), "hf")
    source = resolve_source(spec, arg)
    checkpoint = inspect_checkpoint(spec, source, settings.trust_remote_code, options.flag)
    frames = choose_frame_input(
        spec, options.flag, checkpoint.family, options.extra.get("frame_input")
    )
    if settings.padding_side == "right" and settings.batch_size > 1 and decoder_only(spec, source):
        raise ConfigError(
            f"{spec}: {options.flag} padding_side=right with batch_size={settings.batch_size}: "
            "its language model generates after each prompt's last position, so a shorter "
            "prompt of a batch would go on from its padding (wrong answers); use "
            "padding_side=left (the default), or batch_size=1"
        )
    return HFModel(spec, source, replace(settings, frames=frames), checkpoint)
