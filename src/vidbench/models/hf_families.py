"""Model families of the local backends (`hf:`, `vllm:`), as data: which transformers class loads
a checkpoint, how the frames of a request reach the model, and where that is documented.

A request's frames reach a model in one of two ways (`frame_input`):

- `images`: every image of the request is one image of the prompt, in place (`{"type":
  "image"}` in the chat template's conversation, the picture in the processor's `images`);
- `video`: every run of consecutive images (no text between them) is one clip, given to the
  model's own video input (`{"type": "video"}`, the frames in the processor's `videos`). The
  4D-Bench QA scripts send their 18 frames (3 views x 6) to Qwen2-VL, LLaVA-OneVision and
  LLaVA-Video as one video, and to InternVL2 with its video convention (`Frame1: <image>...`).

Each family names the inputs its model takes, the one vidbench uses unless `--model-opt
frame_input=...` says otherwise, and, where the model's video input was trained and documented
with a fixed number of frames per clip, that number (a clip of another length is refused, never
resampled). `prompt="plain"` marks models without a chat template (InstructBLIP-Video): the
prompt is the request's text and the processor places the video tokens itself.

Checkpoints of other model types run on the generic image-text-to-text path, with images.
"""

from __future__ import annotations

from dataclasses import dataclass

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json

GENERIC_MODEL_CLASS = "AutoModelForImageTextToText"
FRAME_INPUTS = ("images", "video")


@dataclass(frozen=True)
class Family:
    name: str
    model_class: str  # a transformers class with from_pretrained
    inputs: tuple[str, ...] = ("images",)  # frame inputs the model takes
    default_input: str = "images"
    video_frames: int | None = None  # frames per clip the video input is documented with
    max_media: int | None = None  # images (or clips) one prompt may hold (None: any)
    prompt: str = "chat"  # "chat": the processor's chat template; "plain": the text alone
    video_argument: str = "videos"  # the processor argument clips are passed in
    documented: str = ""  # where the frame handling comes from


# config.json "model_type" -> family
FAMILIES: dict[str, Family] = {
    "qwen2_vl": Family(
        "qwen2-vl",
        "Qwen2VLForConditionalGeneration",
        ("images", "video"),
        documented="model card: images or a video (a list of frames); the 4D-Bench QA script "
        "sends its 18 frames as one video",
    ),
    "qwen2_5_vl": Family(
        "qwen2.5-vl",
        "Qwen2_5_VLForConditionalGeneration",
        ("images", "video"),
        documented="model card: images or a video (a list of frames)",
    ),
    # LLaVA-OneVision and the converted LLaVA-Video-*-Qwen2-hf checkpoints share this architecture
    "llava_onevision": Family(
        "llava-onevision",
        "LlavaOnevisionForConditionalGeneration",
        ("images", "video"),
        documented="model card: images or a video; the 4D-Bench QA scripts of LLaVA-OneVision "
        "and LLaVA-Video send their 18 frames as one video",
    ),
    "llava_next_video": Family(
        "llava-next-video",
        "LlavaNextVideoForConditionalGeneration",
        ("images", "video"),
        default_input="video",
        documented="model card: a video of 8 uniformly sampled frames",
    ),
    "video_llava": Family(
        "video-llava",
        "VideoLlavaForConditionalGeneration",
        ("images", "video"),
        default_input="video",
        video_frames=8,
        documented="Video-LLaVA paper and model card: 8 frames per video; MMWorld appendix C: "
        "8 frames",
    ),
    "internvl": Family(
        "internvl",
        "InternVLForConditionalGeneration",
        ("images", "video"),
        documented="model card: images (tiles) or a video (`Frame1: <image>...`, as the 4D-Bench "
        "InternVL2 script writes its 18 frames)",
    ),
    "instructblipvideo": Family(
        "instructblip-video",
        "InstructBlipVideoForConditionalGeneration",
        ("video",),
        default_input="video",
        video_frames=4,
        max_media=1,
        prompt="plain",
        video_argument="images",
        documented="transformers: InstructBLIP-Video takes one video of exactly 4 frames; "
        "MMWorld runs X-InstructBLIP on 4 frames",
    ),
    "llava": Family(
        "llava",
        "LlavaForConditionalGeneration",
        documented="LLaVA-1.5 model card: images (trained on one per prompt); AutoEval-Video "
        "section 7.1: the frames as one grid padded to a square (it center-crops)",
    ),
    # InstructBLIP and BLIP-2: one image, a plain prompt (AutoEval-Video's ImageLLM rows send
    # one grid of 8 or 16 frames)
    "instructblip": Family(
        "instructblip",
        "InstructBlipForConditionalGeneration",
        max_media=1,
        prompt="plain",
        documented="model card: one image and a text prompt; AutoEval-Video section 7.1: the "
        "frames as one grid image",
    ),
    "blip-2": Family(
        "blip-2",
        "Blip2ForConditionalGeneration",
        max_media=1,
        prompt="plain",
        documented="model card: one image and a text prompt (`Question: ... Answer:`); "
        "AutoEval-Video section 7.1: the frames as one grid image",
    ),
    "gemma3": Family(
        "gemma-3",
        "Gemma3ForConditionalGeneration",
        documented="model card: images only (no video input)",
    ),
    "idefics3": Family(
        "idefics3",
        "Idefics3ForConditionalGeneration",
        documented="model card: images only (no video input)",
    ),
    # SmolVLM and SmolVLM2 (SmolVLM2 adds a video input)
    "smolvlm": Family(
        "smolvlm",
        "SmolVLMForConditionalGeneration",
        ("images", "video"),
        documented="SmolVLM2 model card: images or a video",
    ),
}


def family_for(model_type: str) -> Family:
    return FAMILIES.get(model_type, Family(f"generic ({model_type})", GENERIC_MODEL_CLASS))


def remote_family(model_type: str) -> Family:
    """A checkpoint that ships its own code: whatever class its config maps, images only."""
    return Family(f"own code ({model_type})", GENERIC_MODEL_CLASS)


@dataclass(frozen=True)
class FrameInput:
    """How a model receives the frames: recorded in its identity (it decides the answers)."""

    kind: str  # "images" or "video"
    video_frames: int | None = None  # frames per clip the model takes, where fixed

    def identity(self) -> dict[str, Json]:
        return {"frame_input": self.kind, "video_frames": self.video_frames}


IMAGES = FrameInput("images")


def choose_frame_input(spec: str, flag: str, family: Family, asked: str | None) -> FrameInput:
    """The family's frame input, or the one `--model-opt frame_input=` asks for if it takes it."""
    kind = asked or family.default_input
    if kind not in FRAME_INPUTS:
        raise ConfigError(f"{spec}: {flag} frame_input={kind!r}; use images or video")
    if kind not in family.inputs:
        raise ConfigError(
            f"{spec}: {family.name} takes frames as {' or '.join(family.inputs)} only, "
            f"not {kind} ({flag} frame_input={kind})"
        )
    return FrameInput(kind, family.video_frames if kind == "video" else None)


def load_model_class(family: Family) -> type:
    import transformers

    return getattr(transformers, family.model_class)
