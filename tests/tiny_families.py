"""Tiny randomly initialised checkpoints of the `hf:` families beyond Qwen2-VL and LLaVA-OneVision
(tiny_models.py): Video-LLaVA, InternVL, InstructBLIP-Video, InstructBLIP, BLIP-2, LLaVA-1.5,
Gemma 3 and Idefics3, each built offline from a config with a 1-layer vision tower and a 2-layer
text model, and a processor with a byte-level tokenizer (tiny_models.byte_tokenizer) and a chat
template that follows the structure of the official one (placeholders in content order).
`build(name, path)` saves one that `hf:PATH` loads; video-input families wrap their image
processor in the test stand-in for the video processor (video_stand_in.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tiny_models import INIT_STD, byte_tokenizer, vision_tower
from video_stand_in import frames_video_processor

HIDDEN = 64


def chat_template(turn: str, end: str, assistant: str, image: str, video: str = "") -> str:
    """A template writing each message as `turn` (with {role}), its parts in order (images and
    videos as their placeholders), then `end`; `assistant` opens the reply."""
    return (
        "{% for message in messages %}"
        + turn.replace("{role}", "{{ message['role'] }}")
        + "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
        "{% for content in message['content'] %}"
        f"{{% if content['type'] == 'image' %}}{image}"
        f"{{% elif content['type'] == 'video' %}}{video}"
        "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
        "{% endfor %}{% endif %}"
        f"{end}{{% endfor %}}{{% if add_generation_prompt %}}{assistant}{{% endif %}}"
    )


CHATML = ("<|im_start|>{role}\n", "<|im_end|>\n", "<|im_start|>assistant\n")


def text_config(model_type: str, vocab: int, ids: dict[str, int], **extra: Any) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "vocab_size": vocab,
        "hidden_size": HIDDEN,
        "intermediate_size": 2 * HIDDEN,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "initializer_range": INIT_STD,
        "tie_word_embeddings": False,
        **extra,
    }


def finish(model: Any, processor: Any, path: Path | None, eos: int, pad: int) -> Any:
    model.eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    if path is None:
        return model, processor
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return Path(path)


def tiny_video_llava(path: Path | None, seed: int = 0) -> Any:
    """Video-LLaVA: CLIP image and video towers (28 px, 14 px patches: 4 patches + CLS per
    frame), a Llama text model, `USER: ... ASSISTANT:` prompts."""
    import torch
    from transformers import (
        VideoLlavaConfig,
        VideoLlavaForConditionalGeneration,
        VideoLlavaImageProcessor,
        VideoLlavaProcessor,
    )

    specials = ("</s>", "<pad>", "<image>", "<video>")
    tokenizer = byte_tokenizer(specials, eos="</s>", pad="<pad>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    image_processor = VideoLlavaImageProcessor(
        size={"shortest_edge": side}, crop_size={"height": side, "width": side}
    )
    processor = VideoLlavaProcessor(
        image_processor=image_processor,
        video_processor=frames_video_processor(image_processor),
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=chat_template("{role}: ", "\n", "ASSISTANT:", "<image>\n", "<video>\n"),
    )
    vision = vision_tower("clip_vision_model", side, projection_dim=32)
    config = VideoLlavaConfig(
        vision_config=vision,
        text_config=text_config("llama", len(tokenizer), ids, pad_token_id=ids["<pad>"]),
        image_token_index=ids["<image>"],
        video_token_index=ids["<video>"],
        vision_feature_layer=-1,
        image_seq_length=4,
        video_seq_length=8 * 5,
    )
    torch.manual_seed(seed)
    model = VideoLlavaForConditionalGeneration(config)
    return finish(model, processor, path, ids["</s>"], ids["<pad>"])


def tiny_llava(path: Path | None, seed: int = 0) -> Any:
    """LLaVA-1.5: a CLIP tower (28 px, 14 px patches: 4 tokens per image), a Llama text model,
    `USER: <image>\n... ASSISTANT:` prompts."""
    import torch
    from transformers import (
        CLIPImageProcessorPil,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    specials = ("</s>", "<pad>", "<image>")
    tokenizer = byte_tokenizer(specials, eos="</s>", pad="<pad>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessorPil(
            size={"shortest_edge": side}, crop_size={"height": side, "width": side}
        ),
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's CLS, which the "default" strategy drops
        chat_template=chat_template("{role}: ", "\n", "ASSISTANT:", "<image>\n"),
    )
    config = LlavaConfig(
        vision_config=vision_tower("clip_vision_model", side, projection_dim=32),
        text_config=text_config("llama", len(tokenizer), ids, pad_token_id=ids["<pad>"]),
        image_token_index=ids["<image>"],
        vision_feature_layer=-1,
        image_seq_length=4,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    return finish(model, processor, path, ids["</s>"], ids["<pad>"])


def blip_configs(side: int, qformer_vocab: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The vision tower (1 layer, 14 px patches) and Q-Former (2 layers) of the BLIP family."""
    vision = vision_tower(None, side, initializer_range=INIT_STD)
    qformer = {
        "vocab_size": qformer_vocab,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "encoder_hidden_size": 32,
        "max_position_embeddings": 2048,  # byte tokens: the prompt is long
        "pad_token_id": 0,
    }
    return vision, qformer


def tiny_blip(path: Path | None, kind: str, seed: int = 0) -> Any:
    """BLIP-2, InstructBLIP or InstructBLIP-Video (`kind`): a 1-layer ViT (28 px), a 2-layer
    Q-Former with 2 queries (per frame for video), a Llama text model; prompts are plain text
    (no chat template) and the processor puts the query tokens first."""
    import torch
    import transformers

    token = "<video>" if kind == "instructblip-video" else "<image>"
    specials = ("</s>", "<pad>", token)
    tokenizer = byte_tokenizer(specials, eos="</s>", pad="<pad>")
    qformer_tokenizer = byte_tokenizer(("[PAD]",), eos="[PAD]", pad="[PAD]")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    image_processor = transformers.BlipImageProcessorPil(size={"height": side, "width": side})
    vision, qformer = blip_configs(side, len(qformer_tokenizer))
    text = text_config("llama", len(tokenizer), ids, pad_token_id=ids["<pad>"])
    parts = {"vision_config": vision, "qformer_config": qformer, "text_config": text}
    parts["num_query_tokens"] = 2
    if kind == "instructblip-video":
        processor = transformers.InstructBlipVideoProcessor(
            video_processor=frames_video_processor(image_processor, "pixel_values"),
            tokenizer=tokenizer,
            qformer_tokenizer=qformer_tokenizer,
            num_query_tokens=2,
        )
        config = transformers.InstructBlipVideoConfig(**parts, video_token_index=ids[token])
        model_class = transformers.InstructBlipVideoForConditionalGeneration
    elif kind == "instructblip":
        processor = transformers.InstructBlipProcessor(
            image_processor, tokenizer, qformer_tokenizer, num_query_tokens=2
        )
        config = transformers.InstructBlipConfig(**parts, image_token_index=ids[token])
        model_class = transformers.InstructBlipForConditionalGeneration
    else:
        processor = transformers.Blip2Processor(image_processor, tokenizer, num_query_tokens=2)
        config = transformers.Blip2Config(**parts, image_token_index=ids[token])
        model_class = transformers.Blip2ForConditionalGeneration
    torch.manual_seed(seed)
    model = model_class(config)
    return finish(model, processor, path, ids["</s>"], ids["<pad>"])


def tiny_instructblip_video(path: Path | None, seed: int = 0) -> Any:
    return tiny_blip(path, "instructblip-video", seed)


def tiny_instructblip(path: Path | None, seed: int = 0) -> Any:
    return tiny_blip(path, "instructblip", seed)


def tiny_blip2(path: Path | None, seed: int = 0) -> Any:
    return tiny_blip(path, "blip-2", seed)


def tiny_gemma3(path: Path | None, seed: int = 0) -> Any:
    """Gemma 3: a 1-layer SigLIP (28 px, 14 px patches), 4 soft tokens per image between
    <start_of_image> and <end_of_image>, a Gemma 3 text model."""
    import torch
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessorPil,
        Gemma3Processor,
    )

    named = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
    named["image_token"] = "<image_soft_token>"
    specials = ("<eos>", "<pad>", "<bos>", "<start_of_turn>", "<end_of_turn>", *named.values())
    tokenizer = byte_tokenizer(specials, eos="<end_of_turn>", pad="<pad>", named=named)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessorPil(size={"height": side, "width": side}),
        tokenizer=tokenizer,
        image_seq_length=4,
        chat_template=chat_template(
            "<start_of_turn>{role}\n",
            "<end_of_turn>\n",
            "<start_of_turn>model\n",
            "<start_of_image>",
        ),
    )
    text = text_config(
        "gemma3_text",
        len(tokenizer),
        ids,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=4096,  # the whole prompt: its question is far from its end
        pad_token_id=ids["<pad>"],
        bos_token_id=ids["<bos>"],
        eos_token_id=ids["<end_of_turn>"],
    )
    config = Gemma3Config(
        text_config=text,
        vision_config=vision_tower("siglip_vision_model", side, vision_use_head=False),
        mm_tokens_per_image=4,
        boi_token_index=ids["<start_of_image>"],
        eoi_token_index=ids["<end_of_image>"],
        image_token_index=ids["<image_soft_token>"],
        initializer_range=INIT_STD,
        tie_word_embeddings=False,  # tied, the scaled input embedding predicts itself
    )
    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(config)
    return finish(model, processor, path, ids["<end_of_turn>"], ids["<pad>"])


def tiny_idefics3(path: Path | None, seed: int = 0) -> Any:
    """Idefics3: a 1-layer vision tower (28 px, 14 px patches, pixel shuffle 2: 1 token per
    image, no image splitting), a Llama text model, `User:... Assistant:` prompts."""
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
    )

    classes = (Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor)
    return _idefics3_layout(path, seed, Idefics3ImageProcessorPil, *classes)


def tiny_smolvlm(path: Path | None, seed: int = 0) -> Any:
    """SmolVLM(2): Idefics3's layout with SmolVLM's classes; its processor's video processor is
    the stand-in (video_stand_in.py), and frames go in as images, the family's default."""
    from transformers import (
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessorPil,
        SmolVLMProcessor,
    )

    def processor(**kwargs: Any) -> Any:
        video = frames_video_processor(kwargs["image_processor"])
        return SmolVLMProcessor(video_processor=video, **kwargs)

    classes = (SmolVLMConfig, SmolVLMForConditionalGeneration, processor)
    return _idefics3_layout(path, seed, SmolVLMImageProcessorPil, *classes)


def _idefics3_layout(
    path: Path | None,
    seed: int,
    image_processor_class: Any,
    config_class: Any,
    model_class: Any,
    processor_class: Callable[..., Any],
) -> Any:
    import torch

    specials = ("<|endoftext|>", "<pad>", "<fake_token_around_image>", "<image>")
    specials += ("<end_of_utterance>", "<global-img>")
    tokenizer = byte_tokenizer(specials, eos="<end_of_utterance>", pad="<pad>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    image_processor = image_processor_class(
        size={"longest_edge": side},
        max_image_size={"longest_edge": side},
        do_image_splitting=False,
    )
    processor = processor_class(
        image_processor=image_processor,
        tokenizer=tokenizer,
        image_seq_len=1,
        chat_template=chat_template("{role}:", "<end_of_utterance>\n", "Assistant:", "<image>"),
    )
    config = config_class(
        vision_config=vision_tower(None, side, initializer_range=INIT_STD),
        text_config=text_config("llama", len(tokenizer), ids, pad_token_id=ids["<pad>"]),
        image_token_id=ids["<image>"],
        scale_factor=2,
        pad_token_id=ids["<pad>"],
    )
    torch.manual_seed(seed)
    model = model_class(config)
    return finish(model, processor, path, ids["<end_of_utterance>"], ids["<pad>"])


def tiny_internvl(path: Path | None, seed: int = 0) -> Any:
    """InternVL (the transformers port): a 1-layer InternViT (28 px tiles, 14 px patches, pixel
    shuffle 0.5: 1 token per tile), a Qwen2 text model, ChatML prompts; images as
    <IMG_CONTEXT>, videos as <video> (the processor writes `Frame1: <img>...</img>`...)."""
    import torch
    from transformers import (
        GotOcr2ImageProcessorPil,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
    )

    named = {
        "start_image_token": "<img>",
        "end_image_token": "</img>",
        "context_image_token": "<IMG_CONTEXT>",
        "video_token": "<video>",
    }
    specials = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", *named.values())
    tokenizer = byte_tokenizer(specials, eos="<|im_end|>", pad="<|endoftext|>", named=named)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    side = 28
    image_processor = GotOcr2ImageProcessorPil(
        size={"height": side, "width": side}, crop_to_patches=False
    )
    processor = InternVLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=frames_video_processor(image_processor),
        image_seq_length=1,
        chat_template=chat_template(*CHATML, "<IMG_CONTEXT>\n", "<video>\n"),
    )
    config = InternVLConfig(
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": [side, side],
            "patch_size": [14, 14],
            "initializer_range": INIT_STD,
        },
        text_config=text_config("qwen2", len(tokenizer), ids, pad_token_id=ids["<|endoftext|>"]),
        image_token_id=ids["<IMG_CONTEXT>"],
        image_seq_length=1,
    )
    torch.manual_seed(seed)
    model = InternVLForConditionalGeneration(config)
    return finish(model, processor, path, ids["<|im_end|>"], ids["<|endoftext|>"])


BUILDERS: dict[str, Callable[..., Any]] = {
    "video-llava": tiny_video_llava,
    "instructblip-video": tiny_instructblip_video,
    "instructblip": tiny_instructblip,
    "llava": tiny_llava,
    "blip-2": tiny_blip2,
    "gemma-3": tiny_gemma3,
    "idefics3": tiny_idefics3,
    "smolvlm": tiny_smolvlm,
    "internvl": tiny_internvl,
}


def build(name: str, path: Path | None, seed: int = 0) -> Any:
    return BUILDERS[name](path, seed)
