"""A tiny vision-language model whose only interface is its own `chat()`, shaped after
InternVL2's: `<image>` placeholders in the question become `<img><IMG_CONTEXT>...</img>`, the
context tokens' embeddings are replaced by image features, the language model generates."""

import torch
from torch import nn
from transformers import PreTrainedModel, Qwen2Config, Qwen2ForCausalLM

from .configuration_tiny_chat import TinyChatConfig


class TinyChatModel(PreTrainedModel):
    config_class = TinyChatConfig
    _no_split_modules = ()

    def __init__(self, config: TinyChatConfig):
        super().__init__(config)
        llm = Qwen2Config(**config.llm_config)
        self.language_model = Qwen2ForCausalLM(llm)
        self.vision = nn.Linear(3 * 4 * 4, llm.hidden_size * config.num_image_token)
        self.post_init()

    def extract_feature(self, pixel_values):
        """(tiles, 3, H, W) -> (tiles * num_image_token, hidden): 4x4 average pooling, linear."""
        pooled = nn.functional.adaptive_avg_pool2d(pixel_values, 4).flatten(1)
        return self.vision(pooled).reshape(-1, self.language_model.config.hidden_size)

    @torch.inference_mode()
    def chat(
        self,
        tokenizer,
        pixel_values,
        question,
        generation_config,
        history=None,
        return_history=False,
        num_patches_list=None,
        IMG_START_TOKEN="<img>",
        IMG_END_TOKEN="</img>",
        IMG_CONTEXT_TOKEN="<IMG_CONTEXT>",
    ):
        if num_patches_list is None:
            num_patches_list = [pixel_values.shape[0]]
        if "<image>" not in question:
            question = "<image>\n" + question
        for tiles in num_patches_list:
            context = IMG_CONTEXT_TOKEN * self.config.num_image_token * tiles
            question = question.replace("<image>", IMG_START_TOKEN + context + IMG_END_TOKEN, 1)
        query = f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
        ids = tokenizer(query, return_tensors="pt").input_ids.to(self.device)
        embeds = self.language_model.get_input_embeddings()(ids)
        slots = ids[0] == tokenizer.convert_tokens_to_ids(IMG_CONTEXT_TOKEN)
        features = self.extract_feature(pixel_values.to(self.device, self.dtype))
        embeds[0, slots] = features
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        output = self.language_model.generate(
            inputs_embeds=embeds,
            attention_mask=torch.ones_like(ids),
            eos_token_id=eos,
            pad_token_id=eos,
            **generation_config,
        )
        response = tokenizer.decode(output[0], skip_special_tokens=True).strip()
        return (response, history) if return_history else response
