"""What the `vllm:` backend hands vLLM for one request, built on the CPU without vLLM.

vLLM's offline API takes a prompt string with the model's placeholders and the media apart:
`LLM.generate([{"prompt": ..., "multi_modal_data": {"image": [PIL images]}}], sampling)` or,
for a video input, `{"video": [frames array (T, H, W, 3), ...]}`; vLLM expands each placeholder
into the model's tokens. vidbench writes the prompt with the checkpoint's own chat template (its
processor's, the one `hf:` uses: `hf_inputs.py`), one placeholder per image or per clip in
content order, and passes the frames in that order, so the two backends show a model the same
thing. Everything here runs without vLLM or a GPU; what vLLM then computes is vLLM's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pydantic import JsonValue

from vidbench.core.requests import Request
from vidbench.media.images import decode_image
from vidbench.models.hf_families import Family, FrameInput
from vidbench.models.hf_inputs import ChatInput, clip_array, media_problem, prompt_text, to_chat

MODALITY = {"images": "image", "video": "video"}  # vidbench frame input -> vLLM's modality key


if TYPE_CHECKING:
    import numpy as np
    from PIL import Image


class PromptInputs(TypedDict):
    """One prompt as vLLM's generate takes it: its text and its frames, by modality."""

    prompt: str
    multi_modal_data: NotRequired[dict[str, list[np.ndarray] | list[Image.Image]]]


@dataclass(frozen=True)
class PromptBuilder:
    """A checkpoint's chat template and frame handling: requests -> vLLM inputs."""

    processor: Any
    family: Family
    frames: FrameInput
    modality: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "modality", MODALITY[self.frames.kind])

    def chat(self, request: Request) -> ChatInput:
        return to_chat(request.messages, self.frames.kind)

    def media_count(self, request: Request) -> int:
        """Items of this request's modality (images, or clips of the video input)."""
        chat = self.chat(request)
        return len(chat.clips) if self.frames.kind == "video" else len(chat.images)

    def problem(self, request: Request) -> str | None:
        return media_problem(self.family, self.frames, self.chat(request))

    def build(self, request: Request) -> PromptInputs:
        """{"prompt": ..., "multi_modal_data": {modality: [...]}} (no media: the prompt alone)."""
        chat = self.chat(request)
        inputs: PromptInputs = {"prompt": prompt_text(self.processor, self.family, chat)}
        if self.frames.kind == "video" and chat.clips:
            inputs["multi_modal_data"] = {"video": [clip_array(clip) for clip in chat.clips]}
        elif chat.images:
            inputs["multi_modal_data"] = {"image": [decode_image(p.data) for p in chat.images]}
        return inputs


def sampling_arguments(request: Request) -> dict[str, JsonValue]:
    """vLLM's SamplingParams for a request: exactly its generation settings (GenerationConfig's
    fields are SamplingParams' names)."""
    return request.generation.as_dict()
