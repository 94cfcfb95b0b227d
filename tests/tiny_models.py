"""Tiny randomly initialised vision-language models, built offline from configs (no download).

`tiny_qwen2_vl(path)` and `tiny_llava_onevision(path)` save a model and a processor that
`AutoProcessor` / `AutoModelForImageTextToText.from_pretrained(path)` load back, so tests run
the real `hf:` code path on CPU in a second or two. The tokenizer is byte-level BPE without merges
(every byte is a token), plus each family's special tokens; the chat templates follow the
structure of the official ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

BYTE_VOCAB = 256
# Weights ten times larger than the usual 0.02, so the random model's greedy output depends on
# its input (text, images and their order) instead of being the same string for every prompt.
INIT_STD = 0.2

QWEN_SPECIALS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

# Structure of Qwen2-VL's template: system prompt first, images and videos as
# <|vision_start|><|image_pad|><|vision_end|> in content order, then the generation prompt.
QWEN2_VL_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Structure of LLaVA-OneVision's (Qwen2 text) template: images first in each message's order,
# as <image> placeholders, then the text.
LLAVA_OV_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}<image>\n"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}"
    "{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vision_tower(model_type: str | None, side: int, **extra: Any) -> dict[str, Any]:
    """A tiny vision config (2 heads of 16, patches of 14) for `side`-px images: CLIP's (2
    layers) or SigLIP's, or (model_type None) the one a family's config names itself."""
    layers = 2 if model_type == "clip_vision_model" else 1
    return {
        **({"model_type": model_type} if model_type else {}),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "image_size": side,
        "patch_size": 14,
        **extra,
    }


def byte_tokenizer(
    specials: tuple[str, ...], eos: str, pad: str, named: dict[str, str] | None = None
):  # -> PreTrainedTokenizerFast
    """A byte-level BPE tokenizer without merges (ids 0..255 are bytes), specials after them;
    `named` specials are also attributes (`tokenizer.boi_token`, `tokenizer.boi_token_id`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    assert len(vocab) == BYTE_VOCAB
    raw = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    raw.decoder = decoders.ByteLevel()
    raw.add_special_tokens(list(specials))
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token=eos,
        pad_token=pad,
        padding_side="left",
        extra_special_tokens=named or {},
    )


# Qwen2-VL-2B's shapes (its config.json), for throughput stand-ins with random weights.
QWEN2_VL_2B = {
    "text": {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
             "num_attention_heads": 12, "num_key_value_heads": 2, "vocab_size": 151936,
             "mrope_section": [16, 24, 24]},
    "vision": {"depth": 32, "embed_dim": 1280, "num_heads": 16, "mlp_ratio": 4},
}  # fmt: skip


def _made(
    model_class: Any, config: Any, processor: Any, ids: dict[str, int], path: Path | None, seed: int
) -> Any:
    """The model of `config` with random weights from `seed`, ending replies at <|im_end|>;
    saved with its processor to `path` (returns the folder), or (model, processor) when `path`
    is None."""
    import torch

    torch.manual_seed(seed)
    model = model_class(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    if path is None:
        return model, processor
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return Path(path)


def tiny_qwen2_vl(
    path: Path | None, image_side: int = 56, seed: int = 0, shapes: dict | None = None
) -> Any:
    """A 2-layer Qwen2-VL (hidden 64) whose processor resizes every image to image_side^2,
    saved to `path`; with `shapes` (e.g. QWEN2_VL_2B) a model of those sizes, and with
    `path=None` the (model, processor) in memory instead of saved.

    With the default 56 px an image is 4x4 patches of 14 px, merged 2x2: 4 tokens per image.
    """
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessorPil,
        Qwen2VLProcessor,
    )

    from vidbench.models.hf_checkpoint import image_only_processor

    tokenizer = byte_tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    pixels = image_side * image_side
    image_processor = Qwen2VLImageProcessorPil(
        size={"shortest_edge": pixels, "longest_edge": pixels},
        patch_size=14,
        temporal_patch_size=2,
        merge_size=2,
    )
    processor = image_only_processor(Qwen2VLProcessor)(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=QWEN2_VL_TEMPLATE
    )
    text = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": len(tokenizer),
        "mrope_section": [2, 3, 3],
    }  # fmt: skip  (mrope sums to head_dim / 2 = 8)
    vision = {"depth": 1, "embed_dim": 32, "num_heads": 2, "mlp_ratio": 2}
    if shapes is not None:
        text, vision = {**text, **shapes["text"]}, {**vision, **shapes["vision"]}
    hidden = text["hidden_size"]
    init = INIT_STD if shapes is None else 0.02  # a deep model keeps the usual, stable scale
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": text["vocab_size"],
            "hidden_size": hidden,
            "intermediate_size": text["intermediate_size"],
            "num_hidden_layers": text["num_hidden_layers"],
            "num_attention_heads": text["num_attention_heads"],
            "num_key_value_heads": text["num_key_value_heads"],
            "max_position_embeddings": 32768,
            "initializer_range": init,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": text["mrope_section"],
            },
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": vision["depth"],
            "embed_dim": vision["embed_dim"],
            "hidden_size": hidden,
            "num_heads": vision["num_heads"],
            "mlp_ratio": vision["mlp_ratio"],
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "initializer_range": init,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return _made(Qwen2VLForConditionalGeneration, config, processor, ids, path, seed)


def tiny_llava_onevision(path: Path, image_side: int = 28, seed: int = 0) -> Path:
    """A LLaVA-OneVision with a 1-layer SigLIP (14 px patches) and a 2-layer Qwen2 text model.

    With the default 28 px tiles an image is 2x2 = 4 patches; in a multi-image prompt each image
    becomes those 4 tokens plus one newline token.
    """
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessorPil,
        LlavaOnevisionProcessor,
    )

    from vidbench.models.hf_checkpoint import image_only_processor

    specials = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>")
    tokenizer = byte_tokenizer(specials, eos="<|im_end|>", pad="<|endoftext|>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = image_side
    pinpoints = [[side, side], [side, 2 * side], [2 * side, side], [2 * side, 2 * side]]
    image_processor = LlavaOnevisionImageProcessorPil(
        size={"height": side, "width": side}, image_grid_pinpoints=pinpoints
    )
    processor = image_only_processor(LlavaOnevisionProcessor)(
        image_processor=image_processor,
        tokenizer=tokenizer,
        num_image_tokens=(side // 14) ** 2,
        vision_feature_select_strategy="full",
        chat_template=LLAVA_OV_TEMPLATE,
        vision_aspect_ratio="anyres_max_9",
    )
    hidden = 64
    config = LlavaOnevisionConfig(
        vision_config=vision_tower("siglip_vision_model", side, vision_use_head=False),
        text_config={
            "model_type": "qwen2",
            "vocab_size": len(tokenizer),
            "hidden_size": hidden,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "initializer_range": INIT_STD,
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        image_token_index=ids["<image>"],
        video_token_index=ids["<video>"],
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        image_grid_pinpoints=pinpoints,
    )
    return _made(LlavaOnevisionForConditionalGeneration, config, processor, ids, path, seed)
