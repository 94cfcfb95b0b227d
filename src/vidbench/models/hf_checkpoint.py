"""What a checkpoint is, read from its config.json before any weight loads: its model type, its
family, and whether it ships its own code; and the loading of its processor and model class.

A checkpoint whose config maps its classes to Python files of its own (`auto_map`) for a model
type transformers does not know runs only with `--model-opt trust_remote_code=true`: that code
then executes on this machine, with your user's rights. Without the option it is refused, with a
message naming it. With the option the checkpoint's own classes load (transformers' Auto classes
with `trust_remote_code=True`) and take frames as images.

Processors are loaded without their video processor when frames go as images: it is unused, and
in recent transformers it needs torchvision, which has no CPU build to pair with a CPU torch.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from vidbench.core.errors import ConfigError
from vidbench.models.hf_families import (
    GENERIC_MODEL_CLASS,
    Family,
    family_for,
    remote_family,
)

if TYPE_CHECKING:
    from transformers import ProcessorMixin

TRUST_OPTION = "trust_remote_code=true"
# the Auto classes a checkpoint's own code may register its generating model under, in preference
OWN_MODEL_CLASSES = (
    "AutoModelForImageTextToText",
    "AutoModelForVision2Seq",
    "AutoModelForCausalLM",
)


@dataclass(frozen=True)
class Checkpoint:
    source: str
    model_type: str
    family: Family
    own_code: bool  # its own classes run (trust_remote_code given and the checkpoint ships code)
    auto_map: dict[str, str]
    weights: str  # which files: the hub snapshot's commit, or a digest of the folder's files


def read_config(spec: str, source: str) -> tuple[Path, dict[str, JsonValue]]:
    """config.json of a local directory or of a hub id (from the cache when offline): where it
    was read, and what it holds."""
    path = Path(source) / "config.json"
    if not path.is_file():
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(source, "config.json"))
        except Exception as e:  # offline and not cached, no such repo, no network
            raise ConfigError(f"{spec}: cannot read the config.json of {source} ({e})") from e
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{spec}: {path} is not readable JSON ({e})") from e
    if not isinstance(config, dict):
        raise ConfigError(f"{spec}: {path} is not a JSON object")
    return path, config


def decoder_only(spec: str, source: str) -> bool:
    """Whether the checkpoint's language model generates after the prompt's last position (a
    decoder-only LLM: Qwen2, OPT, ...), not from an encoder's output (T5: InstructBLIP and BLIP-2
    Flan-T5); a model type transformers does not know (own code) counts as not."""
    from transformers import AutoConfig

    _, config = read_config(spec, source)
    text = config.get("text_config")
    kind = text.get("model_type") if isinstance(text, dict) else None
    try:
        made = AutoConfig.for_model(str(kind or config.get("model_type")))
    except (KeyError, ValueError):
        return False
    return not made.get_text_config().is_encoder_decoder


def files_version(source: str, config_path: Path) -> str:
    """Which files a checkpoint is: a hub id's snapshot commit (the folder its config.json was
    found in), or for a folder, a digest of the names, sizes and modification times of the files
    in it (weights saved over the old ones in place are another model). Subfolders (a trainer's
    checkpoint-N/, runs/) and hidden files do not count: transformers reads the files at the top.
    Nothing is read but the listing: a 70B checkpoint costs no hashing."""
    folder = Path(source)
    if not folder.is_dir():
        return config_path.parent.name
    listing = []
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.startswith("."):
            stat = path.stat()
            listing.append([path.name, stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


@functools.cache
def known_model_types() -> frozenset[str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return frozenset(CONFIG_MAPPING_NAMES)


@functools.cache
def image_text_model_types() -> frozenset[str]:
    """The model types transformers' image-text-to-text Auto class (the generic path) loads."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    return frozenset(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)


def inspect_checkpoint(spec: str, source: str, trust_remote_code: bool, flag: str) -> Checkpoint:
    """The checkpoint's type and family; refuses code it ships unless the user trusts it."""
    config_path, config = read_config(spec, source)
    model_type = str(config.get("model_type", ""))
    auto_map = config.get("auto_map") or {}
    if not isinstance(auto_map, dict):
        auto_map = {}
    native = model_type in known_model_types()
    if auto_map and not native and not trust_remote_code:
        files = sorted({str(ref).split(".")[0] + ".py" for ref in auto_map.values()})
        raise ConfigError(
            f"{spec}: this checkpoint ships its own code ({', '.join(files)}) for model type "
            f"{model_type!r}, which transformers does not know; running it executes that code on "
            f"this machine. Read it, then run with {flag} {TRUST_OPTION}"
        )
    if not native and not auto_map:
        raise ConfigError(
            f"{spec}: transformers does not know model type {model_type!r} and the checkpoint "
            "ships no code for it (is transformers too old for it?)"
        )
    own_code = bool(auto_map) and trust_remote_code
    family = remote_family(model_type) if own_code else family_for(model_type)
    if not own_code:
        check_architectures(spec, config.get("architectures"), family)
        check_generic(spec, model_type, family)
    classes = {str(name): str(where) for name, where in auto_map.items()}
    weights = files_version(source, config_path)
    return Checkpoint(source, model_type, family, own_code, classes, weights)


def check_generic(spec: str, model_type: str, family: Family) -> None:
    """A model type of no family goes through transformers' image-text-to-text class, which
    loads only the types it lists: any other (a text-only LLM) stops here, in words, not with
    transformers' list of a hundred config classes when the weights load."""
    if family.model_class == GENERIC_MODEL_CLASS and model_type not in image_text_model_types():
        raise ConfigError(
            f"{spec}: model type {model_type!r} is not an image-text-to-text model in "
            "transformers (a text-only model?), and hf: runs vision-language models; a text "
            "model's blind baseline runs on a server of it: blind:openai-compat:URL#NAME "
            "(docs/how-to/local-models.md)"
        )


def check_architectures(spec: str, architectures: JsonValue, family: Family) -> None:
    """A checkpoint made for other code than the class that would load it (lmms-lab's LLaVA-Video
    says model_type "llava" but is `LlavaQwenForCausalLM` of the LLaVA-NeXT repository) would
    load with most weights missing and answer at random: stop instead."""
    import transformers

    listed = architectures if isinstance(architectures, list) else []
    named = [a for a in listed if isinstance(a, str)]
    if not named:
        return
    if family.model_class == GENERIC_MODEL_CLASS:
        fits, loader = any(hasattr(transformers, a) for a in named), "transformers does not have"
    else:
        fits, loader = family.model_class in named, f"{family.model_class} does not load"
    if not fits:
        raise ConfigError(
            f"{spec}: the checkpoint's architecture is {', '.join(named)}, which {loader}: "
            "it needs the code it was made with (a python: model, docs/reproducing-papers.md), "
            "or a transformers conversion of it"
        )


def own_model_class(checkpoint: Checkpoint) -> Any:
    """The Auto class the checkpoint's own code registers its generating model under."""
    import transformers

    for name in OWN_MODEL_CLASSES:
        if name in checkpoint.auto_map:
            return getattr(transformers, name)
    raise ConfigError(
        f"{checkpoint.source}: its own code registers no generating model "
        f"({', '.join(OWN_MODEL_CLASSES)} in auto_map; it has {', '.join(checkpoint.auto_map)}): "
        "it has its own chat API, which a python: model can call (docs/reproducing-papers.md)"
    )


@functools.cache
def image_only_processor(base: type[ProcessorMixin]) -> type[ProcessorMixin]:
    """`base` (a ProcessorMixin subclass) without its video processor, under the same name so
    that what it saves loads back with AutoProcessor."""
    if "video_processor" not in base.get_attributes():
        return base

    class ImageOnly(base):
        @classmethod
        def get_attributes(cls) -> list[str]:
            return [a for a in super().get_attributes() if a != "video_processor"]

        def apply_chat_template(self, conversation: Any, *args: Any, **kwargs: Any) -> Any:
            # A family's own apply_chat_template may fill in its video processor's settings
            # (SmolVLM's num_frames and fps), which this processor does not have; with no video
            # in the conversation, ProcessorMixin's renders the same prompt.
            from transformers import ProcessorMixin

            return ProcessorMixin.apply_chat_template(self, conversation, *args, **kwargs)

    if isinstance(getattr(base, "attributes", None), list):  # transformers 4.x declares them
        ImageOnly.attributes = [a for a in base.attributes if a != "video_processor"]
    ImageOnly.__name__ = ImageOnly.__qualname__ = base.__name__
    ImageOnly.__doc__ = base.__doc__
    return ImageOnly


def load_processor(checkpoint: Checkpoint, config: Any, with_video: bool = False) -> Any:
    """The checkpoint's processor (image/video processor, tokenizer, chat template), left
    padding; its video processor only `with_video`. A family that prompts with the chat
    template and a checkpoint without one stop here, not as one error per request."""
    from transformers import AutoProcessor
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING

    source = checkpoint.source
    if checkpoint.own_code:
        try:
            processor = AutoProcessor.from_pretrained(source, trust_remote_code=True)
        except (OSError, ValueError, TypeError) as e:
            raise ConfigError(
                f"{source}: its own code has no processor that transformers can load ({e}); "
                "checkpoints with their own chat API run as python: models "
                "(docs/reproducing-papers.md)"
            ) from e
    elif type(config) in PROCESSOR_MAPPING:
        base = PROCESSOR_MAPPING[type(config)]
        try:
            processor = (base if with_video else image_only_processor(base)).from_pretrained(source)
        except Exception as e:  # transformers raises ImportError or ValueError for it
            if with_video and "torchvision" in str(e).lower():
                raise ConfigError(
                    f"{checkpoint.family.name} takes frames as a video here, and transformers' "
                    "video processors need torchvision: install the torchvision build of your "
                    "torch, or send the frames as images (--model-opt frame_input=images)"
                ) from e
            raise
    else:
        processor = AutoProcessor.from_pretrained(source)
    if checkpoint.family.prompt == "chat" and not getattr(processor, "chat_template", None):
        raise ConfigError(
            f"{source} has no chat template, and {checkpoint.family.name} prompts are written "
            "with it: put the model's own template in the folder (chat_template.jinja, or "
            "`chat_template` in tokenizer_config.json), as its original release has it"
        )
    tokenizer = tokenizer_of(processor)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return processor


def tokenizer_of(processor: Any) -> Any:
    """The processor's text tokenizer (a bare tokenizer is its own)."""
    return getattr(processor, "tokenizer", processor)
