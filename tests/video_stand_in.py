"""A stand-in for transformers' video processors, for the tiny video-input checkpoints.

transformers' video processors need torchvision, which has no build for the CPU torch of this
machine, so a checkpoint whose frames go to the model's video input cannot load its real video
processor here. `FramesVideoProcessor` preprocesses every frame of a clip with the family's
image processor and stacks them, (clips, frames, 3, H, W), under the key the model reads. For
Video-LLaVA and InstructBLIP-Video that is what their video processors compute (resize, crop,
rescale, normalise, per frame); the token expansion, the model's video tower and generation
stay transformers' own. `use_stand_in(monkeypatch)` makes `AutoVideoProcessor` load it from
the checkpoint's processor_config.json (the image processor it wraps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

CALLS: list[dict[str, Any]] = []  # the keyword arguments of every stand-in call, in order


def frames_video_processor(image_processor: Any, output_key: str = "pixel_values_videos") -> Any:
    import torch
    import transformers
    from PIL import Image
    from transformers.image_processing_utils import BatchFeature
    from transformers.video_processing_utils import VideoProcessorMixin

    # processors check their video processor against this base class by its top-level name,
    # which transformers exports only with torchvision installed
    transformers.VideoProcessorMixin = VideoProcessorMixin

    class FramesVideoProcessor(VideoProcessorMixin):
        model_input_names: ClassVar[list[str]] = [output_key]

        def __init__(self) -> None:
            super().__init__()
            self.image_processor = image_processor

        def __call__(self, videos: Any, return_tensors: Any = None, **kwargs: Any) -> Any:
            CALLS.append(kwargs)
            clips = []
            for video in videos:
                frames = [Image.fromarray(frame) for frame in video]
                processed = self.image_processor(frames, return_tensors="pt")
                pixels = processed.get("pixel_values", processed.get("pixel_values_images"))
                clips.append(pixels)
            return BatchFeature({output_key: torch.stack(clips)}, tensor_type=return_tensors)

        def to_dict(self) -> dict[str, Any]:  # saved in the checkpoint's processor_config.json
            return {
                "video_processor_type": "FramesVideoProcessor",
                "output_key": output_key,
                "image_processor": self.image_processor.to_dict(),
            }

    return FramesVideoProcessor()


def use_stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Processors load their video processor through `AutoVideoProcessor`: make it load the
    stand-in saved in the checkpoint's processor_config.json."""
    import importlib

    import transformers

    module = importlib.import_module("transformers.models.auto.video_processing_auto")

    class StandInAuto:
        @classmethod
        def from_pretrained(cls, path: Any, *args: Any, **kwargs: Any) -> Any:
            saved = json.loads((Path(path) / "processor_config.json").read_text())
            config = saved["video_processor"]
            image_config = dict(config["image_processor"])
            image_class = getattr(transformers, image_config.pop("image_processor_type"))
            image_processor = image_class.from_dict(image_config)
            return frames_video_processor(image_processor, config["output_key"])

    monkeypatch.setattr(module, "AutoVideoProcessor", StandInAuto)
