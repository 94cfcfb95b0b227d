"""Model families of the `hf:` backend: which transformers classes load a checkpoint, and how our
messages become the processor's chat-template input.

vidbench always sends frames as images (in FrameSpec order), never as a video, so every family
gets the same conversation shape: one `{"type": "image"}` entry per ImagePart, in place, and
`{"type": "text"}` entries for the text; the images go to the processor as one list per prompt
(LLaVA-OneVision counts tokens per prompt from that nesting). Families differ in the model class
and in what the processor needs; unknown families use the generic image-text-to-text path.

Processors are loaded without their video processor (`image_only_processor`): it is never used
here, and in recent transformers it needs torchvision, which has no CPU build to pair with a CPU
torch.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vidbench.core.messages import ImagePart, Message, TextPart

GENERIC_MODEL_CLASS = "AutoModelForImageTextToText"


@dataclass(frozen=True)
class Family:
    name: str
    model_class: str  # a transformers class with from_pretrained


# config.json "model_type" -> family
FAMILIES: dict[str, Family] = {
    "qwen2_vl": Family("qwen2-vl", "Qwen2VLForConditionalGeneration"),
    "qwen2_5_vl": Family("qwen2.5-vl", "Qwen2_5_VLForConditionalGeneration"),
    # LLaVA-OneVision and the converted LLaVA-Video-*-Qwen2-hf checkpoints share this architecture
    "llava_onevision": Family("llava-onevision", "LlavaOnevisionForConditionalGeneration"),
    "llava_next_video": Family("llava-next-video", "LlavaNextVideoForConditionalGeneration"),
}


def family_for(model_type: str) -> Family:
    return FAMILIES.get(model_type, Family(f"generic ({model_type})", GENERIC_MODEL_CLASS))


def to_chat(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[ImagePart]]:
    """Our messages -> (chat-template conversation, the images in the order they appear)."""
    conversation: list[dict[str, Any]] = []
    images: list[ImagePart] = []
    for message in messages:
        content: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, ImagePart):
                content.append({"type": "image"})
                images.append(part)
            elif isinstance(part, TextPart):
                content.append({"type": "text", "text": part.text})
        conversation.append({"role": message.role, "content": content})
    return conversation, images


@functools.cache
def image_only_processor(base: type) -> type:
    """`base` (a ProcessorMixin subclass) without its video processor, under the same name so
    that what it saves loads back with AutoProcessor."""
    if "video_processor" not in base.get_attributes():
        return base

    class ImageOnly(base):  # type: ignore[misc, valid-type]
        @classmethod
        def get_attributes(cls) -> list[str]:
            return [a for a in super().get_attributes() if a != "video_processor"]

    if isinstance(getattr(base, "attributes", None), list):  # transformers 4.x declares them
        ImageOnly.attributes = [a for a in base.attributes if a != "video_processor"]
    ImageOnly.__name__ = ImageOnly.__qualname__ = base.__name__
    ImageOnly.__doc__ = base.__doc__
    return ImageOnly


def load_processor(source: str, config: Any) -> Any:
    """The checkpoint's processor (image processor, tokenizer, chat template), left padding."""
    from transformers import AutoProcessor
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING

    if type(config) in PROCESSOR_MAPPING:
        processor = image_only_processor(PROCESSOR_MAPPING[type(config)]).from_pretrained(source)
    else:
        processor = AutoProcessor.from_pretrained(source)
    tokenizer = getattr(processor, "tokenizer", None)
    if tokenizer is not None:
        tokenizer.padding_side = "left"  # decoder-only batches pad on the left
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
    return processor


def load_model_class(family: Family) -> Any:
    import transformers

    return getattr(transformers, family.model_class)
