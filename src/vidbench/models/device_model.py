"""What the local checkpoint backends (`hf`, `vllm`) share: weights loaded only once a request
needs them, and requests answered in device batches by a DeviceBatcher (batcher.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.models.batcher import DeviceBatcher
from vidbench.models.hf_checkpoint import Checkpoint
from vidbench.models.local_source import spec_key


class BatchSettings(Protocol):
    @property
    def batch_size(self) -> int: ...


SettingsT = TypeVar("SettingsT", bound=BatchSettings)


class DeviceModel(Model, Generic[SettingsT]):
    """A checkpoint (`source`: its folder or hub id) run on this machine; a subclass sets
    `_batcher`, the DeviceBatcher that answers its requests."""

    start_when_needed = True  # loading weights is costly: only when a request needs them
    _batcher: DeviceBatcher

    def __init__(self, spec: str, source: str, settings: SettingsT, checkpoint: Checkpoint) -> None:
        self.spec = spec
        self.source = source
        self.settings = settings
        self.checkpoint = checkpoint
        self.batch_size = settings.batch_size
        # what keys the stored answers: a folder by its absolute path, however it was typed
        # (`hf:ckpt`, `hf:./ckpt/` and `hf:/data/ckpt` are one model, not three)
        self.spec_key = spec_key(spec, source)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return await self._batcher.submit(requests)
