"""Model spec strings -> backends. Backends are imported only when their prefix is used."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from vidbench.core.errors import ConfigError
from vidbench.models.base import Model


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


def _lazy(module: str, name: str) -> Factory:
    """A factory whose module (and SDK) is imported only when its prefix is used."""

    def factory(arg: str, options: ModelOptions) -> Model:
        import importlib

        return getattr(importlib.import_module(module), name)(arg, options)

    return factory


# prefix -> factory(argument after the first ':', options). New backends register here.
BACKENDS: dict[str, Factory] = {
    "random": _random,
    "random-choice": _lazy("vidbench.models.random_choice", "build"),  # MMWorld's baseline
    "constant": _constant,
    "python": _python,
    "openai": _lazy("vidbench.models.openai_backend", "build_openai"),
    "openai-compat": _lazy("vidbench.models.openai_backend", "build_openai_compat"),
    "anthropic": _lazy("vidbench.models.anthropic_backend", "build_anthropic"),
    "gemini": _lazy("vidbench.models.gemini_backend", "build_gemini"),
    "blind": _lazy("vidbench.models.blind", "build_blind"),
    "hf": _lazy("vidbench.models.hf_backend", "build"),
    "vllm": _lazy("vidbench.models.vllm_backend", "build"),
    "local-llm": _lazy("vidbench.models.local_llm_model", "build"),  # Gemma 3 270M, CPU
    "predictions": _lazy("vidbench.models.predictions", "build"),  # answers made elsewhere
}


def load_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the model a spec names, e.g. `random`, `constant:A`."""
    prefix, _, arg = spec.partition(":")
    factory = BACKENDS.get(prefix)
    if factory is None:
        raise ConfigError(
            f"unknown model spec {spec!r}; known prefixes: {', '.join(sorted(BACKENDS))}"
        )
    return factory(arg, options or ModelOptions())


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
