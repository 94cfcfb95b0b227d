"""A model type of its own (test checkpoint code, loaded with trust_remote_code)."""

from transformers import Idefics3Config


class TinyOwnConfig(Idefics3Config):
    model_type = "tiny_own_vl"
