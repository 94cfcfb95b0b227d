"""Shared checks of the in-process local backends (`hf:`, `vllm:`): optional extras installed,
the checkpoint a spec names, whole-number settings. All run before any weight is loaded."""

from __future__ import annotations

import json
import os
from pathlib import Path

from vidbench.core.errors import ConfigError


def positive_int(spec: str, flag: str, key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(f"{spec}: {flag} {key}={value!r} must be a whole number >= 1")
    return number


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


def weights_not_found(what: str, name: str, detail: str = "") -> ConfigError:
    """The error for weights `name` (a folder, or a Hugging Face hub id) that cannot be loaded:
    where they were looked for, and the ways to provide them."""
    from huggingface_hub import constants

    path = Path(name).expanduser()
    looked = (
        f"the folder {path.resolve()} holds no usable checkpoint"
        if path.is_dir()
        else f"there is no folder {path.resolve()}"
    )
    hub_id = not path.is_dir() and not name.startswith(("/", ".", "~")) and name.count("/") <= 1
    if hub_id:
        looked += f", and {name} is not in the Hugging Face cache ({constants.HF_HUB_CACHE})"
        looked += (
            " and HF_HUB_OFFLINE is set, so it is not downloaded"
            if _hub_offline()
            else " and could not be downloaded"
        )
    ways = "give a folder holding config.json and the weights"
    if hub_id:
        ways += (
            f", or fetch them into the cache once where there is network (`hf download {name}`; "
            "HF_HOME or HF_HUB_CACHE moves the cache)"
        )
        ways += ", or unset HF_HUB_OFFLINE to download them" if _hub_offline() else ""
    return ConfigError(f"{what} {name!r}: {looked}{f' ({detail})' if detail else ''}; {ways}")


def spec_key(spec: str, source: str) -> str:
    """`spec` with a local folder `source` named by its absolute path (its symbolic links
    kept); a hub id's as it is."""
    if not Path(source).is_dir():
        return spec
    prefix = spec.partition(":")[0]
    return f"{prefix}:{os.path.abspath(source)}"


def resolve_source(spec: str, arg: str) -> str:
    """A local checkpoint directory, or a hub id (which must be in the cache when offline)."""
    if not arg:
        raise ConfigError(
            f"{spec}: name a model: a hub id (Qwen/Qwen2-VL-2B-Instruct) or a directory"
        )
    path = Path(arg).expanduser()
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file() and (path / "adapter_config.json").is_file():
            raise ConfigError(
                f"{spec}: {path} is a PEFT adapter (adapter_config.json), not a checkpoint: "
                "merge it into its base model (peft's merge_and_unload, then save_pretrained) "
                "and give that folder"
            )
        if not config.is_file():
            raise ConfigError(f"{spec}: {path} has no config.json; is it a model checkpoint?")
        try:
            json.loads(config.read_text())
        except (OSError, ValueError) as e:
            raise ConfigError(f"{spec}: {config} is not readable JSON ({e})") from e
        return str(path)
    if path.exists():  # a file of the checkpoint (config.json, a shard), not its folder
        holder = (
            f" ({path.parent} holds a config.json)"
            if (path.parent / "config.json").is_file()
            else ""
        )
        raise ConfigError(
            f"{spec}: {path} is a file; give the folder that holds the checkpoint{holder}"
        )
    if arg.startswith(("/", ".", "~")) or arg.count("/") > 1:
        raise ConfigError(f"{spec}: no model directory at {path}")
    if _hub_offline():
        from huggingface_hub import try_to_load_from_cache

        if not isinstance(try_to_load_from_cache(arg, "config.json"), str):
            raise weights_not_found(f"{spec}: model", arg)
    return arg


def true_or_false(spec: str, flag: str, key: str, value: str | None) -> bool:
    """A yes/no setting: true/false (also 1/0, yes/no); absent is false."""
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ConfigError(f"{spec}: {flag} {key}={value!r}; use true or false")
