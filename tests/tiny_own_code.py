"""Tiny checkpoints that ship their own code (tests/own_code/), as InternVL2 or VideoChat2-style
hub checkpoints do: `tiny_own_vl(path)` follows the processor + generate conventions (it runs
as `hf:PATH` with trust_remote_code=true), `tiny_chat_vl(path)` has only its own `chat()` API
(a `python:` model drives it: docs/examples/own_chat_model.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tiny_families import text_config, tiny_idefics3
from tiny_models import byte_tokenizer

OWN_CODE = Path(__file__).parent / "own_code"


def ship(path: Path, stem: str, config_class: str, model_key: str, model_class: str) -> None:
    """Copy the code into the checkpoint and map the config's classes to it (`auto_map`)."""
    for kind in ("configuration", "modeling"):
        shutil.copy(OWN_CODE / f"{kind}_{stem}.py", path / f"{kind}_{stem}.py")
    config = json.loads((path / "config.json").read_text())
    config["auto_map"] = {
        "AutoConfig": f"configuration_{stem}.{config_class}",
        model_key: f"modeling_{stem}.{model_class}",
    }
    (path / "config.json").write_text(json.dumps(config, indent=1))


def tiny_own_vl(path: Path) -> Path:
    """Idefics3 under a model type transformers does not know, with its code in the folder."""
    tiny_idefics3(path)
    config = json.loads((path / "config.json").read_text())
    config["model_type"] = "tiny_own_vl"
    config["architectures"] = ["TinyOwnVL"]
    (path / "config.json").write_text(json.dumps(config, indent=1))
    ship(path, "tiny_own", "TinyOwnConfig", "AutoModelForImageTextToText", "TinyOwnVL")
    return path


def tiny_chat_vl(path: Path, seed: int = 0) -> Path:
    """A model with only its own chat API (and no processor): weights, tokenizer and code."""
    import sys

    import torch

    specials = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>")
    tokenizer = byte_tokenizer(specials, eos="<|im_end|>", pad="<|endoftext|>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    llm = text_config("qwen2", len(tokenizer), ids, pad_token_id=ids["<|endoftext|>"])
    llm.pop("model_type")
    path.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(OWN_CODE.parent))  # build it with the code it ships
    try:
        from own_code.configuration_tiny_chat import TinyChatConfig
        from own_code.modeling_tiny_chat import TinyChatModel
    finally:
        sys.path.remove(str(OWN_CODE.parent))
    torch.manual_seed(seed)
    model = TinyChatModel(TinyChatConfig(llm_config=llm)).eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    config = json.loads((path / "config.json").read_text())
    config["architectures"] = ["TinyChatModel"]
    (path / "config.json").write_text(json.dumps(config, indent=1))
    ship(path, "tiny_chat", "TinyChatConfig", "AutoModel", "TinyChatModel")
    return path
