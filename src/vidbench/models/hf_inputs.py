"""A request's messages as a family's processor takes them: the prompt (chat template or plain
text) and its frames as images or as clips of the model's video input (`hf_families.py`).

The `hf:` backend hands these to the processor; the `vllm:` backend hands the same prompt and
frames to vLLM (`vllm_inputs.py`), so both backends show a model the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vidbench.core.files import Json
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.media.images import decode_image
from vidbench.models.hf_families import Family, FrameInput


@dataclass(frozen=True)
class ChatInput:
    """One request for a processor: the chat-template conversation (or the plain text) and its
    frames, in order: `images` in images mode, `clips` (runs of consecutive images) in video
    mode."""

    conversation: list[dict[str, Json]]
    text: str
    images: list[ImagePart] = field(default_factory=list)
    clips: list[list[ImagePart]] = field(default_factory=list)


def to_chat(messages: Sequence[Message], kind: str = "images") -> ChatInput:
    """Our messages -> the processor's input. Images mode: one `{"type": "image"}` entry per
    image, in place. Video mode: one `{"type": "video"}` entry per run of consecutive images."""
    conversation: list[dict[str, Json]] = []
    images: list[ImagePart] = []
    clips: list[list[ImagePart]] = []
    for message in messages:
        content: list[dict[str, Json]] = []
        in_clip = False
        for part in message.content:
            if isinstance(part, ImagePart) and kind == "video":
                if not in_clip:
                    content.append({"type": "video"})
                    clips.append([])
                clips[-1].append(part)
                in_clip = True
                continue
            in_clip = False
            if isinstance(part, ImagePart):
                content.append({"type": "image"})
                images.append(part)
            elif isinstance(part, TextPart):
                content.append({"type": "text", "text": part.text})
        conversation.append({"role": message.role, "content": content})
    text = "".join(m.text for m in messages)
    return ChatInput(conversation, text, images, clips)


def media_problem(family: Family, frames: FrameInput, chat: ChatInput) -> str | None:
    """Why the model cannot take this request's frames (None: it can): more images or clips than
    a prompt of it holds, or a clip of another length than its video input's documented one
    (refused, never resampled behind the user's back)."""
    items = chat.clips if frames.kind == "video" else chat.images
    noun = "video" if frames.kind == "video" else "image"
    if frames.kind == "video" and not chat.clips:
        return f"{family.name} takes frames as a video, and this request has no images"
    if family.max_media is not None and len(items) > family.max_media:
        hint = " (runs of images split by text)" if frames.kind == "video" else ""
        grid = "" if frames.kind == "video" else ": send the frames as one grid image (grid-RxC)"
        return (
            f"{family.name} takes at most {family.max_media} {noun}"
            f"{'' if family.max_media == 1 else 's'} per prompt; this request has "
            f"{len(items)}{hint}{grid}"
        )
    wanted = frames.video_frames
    lengths = sorted({len(clip) for clip in chat.clips})
    if frames.kind == "video" and wanted is not None and lengths != [wanted]:
        return (
            f"{family.name}'s video input takes {wanted} frames per clip; this request has "
            f"{' and '.join(map(str, lengths))}: choose a task variant with {wanted} frames per "
            f"video (e.g. frames-{wanted}, or views-1+frames-{wanted} for 4D-Bench)"
        )
    return None


def prompt_text(processor: Any, family: Family, chat: ChatInput) -> str:
    """The prompt string: the processor's chat template, or the text alone for plain families."""
    if family.prompt == "plain":
        return chat.text
    return processor.apply_chat_template(
        chat.conversation, tokenize=False, add_generation_prompt=True
    )


def clip_array(clip: Sequence[ImagePart]) -> np.ndarray:
    """A clip as the video processors take it: frames stacked, (T, H, W, 3) uint8."""
    frames = [np.asarray(decode_image(p.data)) for p in clip]
    sizes = {f.shape for f in frames}
    if len(sizes) > 1:
        raise ValueError(f"the frames of one clip differ in size: {sorted(sizes)}")
    return np.stack(frames)
