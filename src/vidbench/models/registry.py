"""Model spec strings -> backends: `PREFIX[:ARGUMENT]`, the prefix naming the backend.

The built-in backends are listed in `BACKENDS`; an installed package adds its own under the
`vidbench.models` entry point group, the entry point's name being its prefix, e.g. in its
pyproject.toml

    [project.entry-points."vidbench.models"]
    mybackend = "mypackage.backend:build"

makes `--model mybackend:NAME` call `build("NAME", options)`. Backends (a plugin's too) are
imported only when their prefix is used. A plugin whose prefix is a built-in one's, or another
plugin's, is refused with both sources named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import cast

from pydantic import JsonValue, TypeAdapter, ValidationError
from rich.markup import escape

from vidbench.console import err
from vidbench.core.errors import ConfigError, VidbenchError, code_of
from vidbench.extras import lazy
from vidbench.models.base import Model

ENTRY_POINTS = "vidbench.models"


@dataclass(frozen=True)
class ModelOptions:
    """Settings a backend may use; each backend reads what it needs.

    `extra` holds backend-specific `--model-opt KEY=VALUE` settings (e.g. device, dtype,
    api_key_env); a backend rejects keys it does not know with a ConfigError.
    """

    seed: int = 0
    concurrency: int = 16
    extra: dict[str, str] = field(default_factory=dict)
    flag: str = "--model-opt"  # the option `extra` came from, for messages ("--judge-opt")


Factory = Callable[[str, ModelOptions], Model]


def parse_options(pairs: Sequence[str], flag: str = "--model-opt") -> dict[str, str]:
    """`KEY=VALUE` command-line settings -> ModelOptions.extra."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {pair!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def reject_extra(name: str, options: ModelOptions, known: tuple[str, ...] = ()) -> None:
    """Stop on --model-opt (--judge-opt) keys a backend does not use (none silently ignored)."""
    unknown = sorted(set(options.extra) - set(known))
    if unknown:
        raise ConfigError(
            f"model {name!r} does not take {options.flag} {', '.join(unknown)}"
            + (f" (it takes: {', '.join(known)})" if known else "")
        )


def _random(arg: str, options: ModelOptions) -> Model:
    from vidbench.models.baselines import RandomChoice

    reject_extra("random", options)
    if arg:
        raise ConfigError("model 'random' takes no argument; its seed comes from --seed")
    return RandomChoice(seed=options.seed)


def _constant(arg: str, options: ModelOptions) -> Model:
    from vidbench.models.baselines import Constant

    reject_extra("constant", options)
    if not arg:
        raise ConfigError("model 'constant:X' needs the answer text X, e.g. constant:A")
    return Constant(arg)


def _python(arg: str, options: ModelOptions) -> Model:
    """`python:package.module:ClassName`: your own Model subclass, built with no arguments."""
    import importlib

    module_name, _, class_name = arg.partition(":")
    if not module_name or not class_name:
        raise ConfigError(f"model 'python:{arg}': expected python:package.module:ClassName")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"model 'python:{arg}': cannot load {class_name} ({e})") from e
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ConfigError(f"model 'python:{arg}': {class_name} is not a vidbench Model")
    model = cls()
    if not getattr(model, "spec", None):
        model.spec = f"python:{arg}"
    return model


# prefix -> factory(argument after the first ':', options); each backend's module (and SDK) is
# imported only when its prefix is used. Built-in backends register here, others by entry point.
BACKENDS: dict[str, Factory] = {
    "random": _random,
    "random-choice": lazy("vidbench.models.random_choice", "build"),  # MMWorld's baseline
    "constant": _constant,
    "python": _python,
    "openai": lazy("vidbench.models.openai_backend", "build_openai"),
    "openai-compat": lazy("vidbench.models.openai_backend", "build_openai_compat"),
    "anthropic": lazy("vidbench.models.anthropic_backend", "build_anthropic"),
    "gemini": lazy("vidbench.models.gemini_backend", "build_gemini"),
    "blind": lazy("vidbench.models.blind", "build_blind"),
    "hf": lazy("vidbench.models.hf_backend", "build"),
    "vllm": lazy("vidbench.models.vllm_backend", "build"),
    "local-llm": lazy("vidbench.models.local_llm_model", "build"),  # Gemma 3 270M, CPU
    "predictions": lazy("vidbench.models.predictions", "build"),  # answers made elsewhere
}


@cache
def plugins() -> dict[str, metadata.EntryPoint]:
    """The installed backends by prefix (not loaded yet); one whose prefix is taken is refused
    with both sources named."""
    found: dict[str, metadata.EntryPoint] = {}
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        plugin = f"plugin {entry.name} ({entry.value})"
        held = found.get(entry.name)
        if entry.name in BACKENDS or held is not None:
            holder = f"plugin {held.name} ({held.value})" if held else _built_in(entry.name)
            err.print(
                f"[yellow]skipped[/] model backend {escape(plugin)}: the prefix {entry.name!r} is "
                f"{escape(holder)}'s",
                highlight=False,
                soft_wrap=True,
            )
            continue
        found[entry.name] = entry
    return found


def _built_in(prefix: str) -> str:
    factory = BACKENDS[prefix]
    where = factory.__name__ if "." in factory.__name__ else f"{__name__}.{factory.__name__}"
    return f"the built-in backend {where}"


def prefixes() -> list[str]:
    """Every model spec prefix: the built-in backends', then the installed ones'."""
    return [*BACKENDS, *plugins()]


def _factory(prefix: str) -> Factory | None:
    installed = plugins()  # read first: a refused plugin is named even when a built-in answers
    if prefix in BACKENDS:
        return BACKENDS[prefix]
    entry = installed.get(prefix)
    if entry is None:
        return None
    plugin = f"model backend plugin {entry.name} ({entry.value})"
    try:
        loaded: object = entry.load()
    except Exception as e:  # any error of a plugin's own code: name the plugin
        raise ConfigError(f"{plugin} does not load ({type(e).__name__}: {e})") from e
    if not callable(loaded):
        raise ConfigError(f"{plugin}: a {type(loaded).__name__}, not a function (arg, options)")
    return cast(Factory, loaded)


def load_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the model a spec names, e.g. `random`, `constant:A`, `mybackend:NAME`."""
    prefix, _, arg = spec.partition(":")
    factory = _factory(prefix)
    if factory is None:
        raise ConfigError(
            f"unknown model spec {spec!r}; known prefixes: {', '.join(sorted(prefixes()))}"
        )
    try:
        model: object = factory(arg, options or ModelOptions())
    except VidbenchError:  # the backend's own word on its argument or options
        raise
    except Exception as e:  # a bug of the backend's code (a plugin's): named, not a traceback
        raise ConfigError(f"model {spec!r}: {_source(prefix)} raised {e!r}") from e
    if not isinstance(model, Model):
        raise ConfigError(
            f"model {spec!r}: its backend returned a {type(model).__name__}, not a vidbench Model"
        )
    _check_identity(spec, model)
    return model


def _source(prefix: str) -> str:
    """The backend a prefix names, for messages."""
    if prefix in BACKENDS:
        return _built_in(prefix)
    entry = plugins()[prefix]
    return f"model backend plugin {entry.name} ({entry.value})"


IDENTITY = TypeAdapter(dict[str, JsonValue])


def _check_identity(spec: str, model: Model) -> None:
    """ConfigError naming the backend's code unless `identity()` is a dict of JSON values: it
    keys every stored answer and is kept in run.json."""
    where = f"model {spec!r} ({code_of(model)})"
    try:
        identity: object = model.identity()
        IDENTITY.validate_python(identity)  # as run.json keeps it
    except VidbenchError:
        raise
    except ValidationError as e:
        first = e.errors()[0]
        at = ".".join(map(str, first["loc"]))
        raise ConfigError(
            f"{where}: identity() must be a dict of JSON values; {at or 'it'}: {first['msg']} "
            f"({type(first['input']).__name__})"
        ) from None
    except Exception as e:
        raise ConfigError(f"{where}: identity() raised {e!r}") from e


@dataclass(frozen=True)
class ModelChoice:
    """A model a command names: its spec, its backend options and the flag they came from (for
    messages), and the call settings it is loaded with (a judge, a generator, a blind model)."""

    spec: str
    options: dict[str, str] = field(default_factory=dict)
    flag: str = "--model-opt"
    concurrency: int = 16
    seed: int = 0

    def load(self) -> Model:
        options = ModelOptions(self.seed, self.concurrency, dict(self.options), self.flag)
        return load_model(self.spec, options)
