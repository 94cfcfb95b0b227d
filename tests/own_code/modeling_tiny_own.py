"""The model of the tiny_own_vl type: Idefics3's, under its own name and config."""

from transformers import Idefics3ForConditionalGeneration

from .configuration_tiny_own import TinyOwnConfig


class TinyOwnVL(Idefics3ForConditionalGeneration):
    config_class = TinyOwnConfig
