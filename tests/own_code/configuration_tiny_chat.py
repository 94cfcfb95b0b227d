"""A model with its own chat API (test checkpoint code, loaded with trust_remote_code)."""

from transformers import PretrainedConfig


class TinyChatConfig(PretrainedConfig):
    model_type = "tiny_chat_vl"

    def __init__(
        self,
        llm_config: dict | None = None,
        image_size: int = 448,
        num_image_token: int = 1,
        initializer_range: float = 0.2,
        **kwargs,
    ):
        self.llm_config = llm_config or {}
        self.image_size = image_size
        self.num_image_token = num_image_token
        self.initializer_range = initializer_range
        super().__init__(**kwargs)
