"""`--model-opt` settings shared by the API backends, and API keys from the environment.

Every value is checked when the model is built, so a typo stops the run before any work.
Keys are read from environment variables only and never put in a spec, identity or message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

from vidbench.core.errors import ConfigError
from vidbench.extras import require
from vidbench.models.registry import ModelOptions, reject_extra

T = TypeVar("T")

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What every API backend takes; a backend adds its own (e.g. detail, thinking_budget).
COMMON_OPTIONS = (
    "api_key_env",
    "base_url",
    "max_retries",
    "timeout",
    "backoff",
    "max_backoff",
    "jpeg_quality",
)


@dataclass(frozen=True)
class ApiSettings:
    """How calls are made; none of it changes an answer, so none of it is in the identity
    except `jpeg_quality` (the pixels the model sees)."""

    concurrency: int = 16
    max_retries: int = 6
    timeout: float = 120.0  # seconds for one attempt, from sending to the parsed reply
    backoff: float = 1.0  # the first retry waits up to this; each later one up to twice as long
    max_backoff: float = 60.0
    jpeg_quality: int | None = None  # None: send the task's image bytes as they are


@dataclass(frozen=True)
class ApiAccess:
    """What every API model is built from: its spec, how calls are made, its key and base URL."""

    spec: str
    settings: ApiSettings
    api_key: str | None = field(repr=False)  # never shown
    endpoint: str


class OptionReader:
    """Typed access to `--model-opt KEY=VALUE`, with errors that name the model and key."""

    def __init__(self, model: str, options: ModelOptions, known: Sequence[str]) -> None:
        reject_extra(model, options, tuple(known))
        self.model = model
        self.extra = options.extra
        self.flag = options.flag
        self.concurrency = options.concurrency

    def _bad(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"model {self.model!r}: {self.flag} {key}={self.extra[key]!r}: {why}")

    def _converted(self, key: str, convert: Callable[[str], T], expected: str) -> T:
        try:
            return convert(self.extra[key])
        except ValueError:
            raise self._bad(key, expected) from None

    def text(self, key: str) -> str | None:
        value = self.extra.get(key)
        return value if value else None

    @overload
    def integer(self, key: str, default: int, low: int, high: int | None = None) -> int: ...
    @overload
    def integer(self, key: str, default: None, low: int, high: int | None = None) -> int | None: ...
    def integer(
        self, key: str, default: int | None, low: int, high: int | None = None
    ) -> int | None:
        if key not in self.extra:
            return default
        value = self._converted(key, int, "expected a whole number")
        if value < low or (high is not None and value > high):
            raise self._bad(key, f"expected {low}..{high}" if high else f"expected >= {low}")
        return value

    def number(self, key: str, default: float, low: float) -> float:
        if key not in self.extra:
            return default
        value = self._converted(key, float, "expected a number of seconds")
        if not value >= low:
            raise self._bad(key, f"expected a number >= {low:g}")
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str | None:
        value = self.extra.get(key)
        if value is not None and value not in choices:
            raise self._bad(key, f"expected one of {', '.join(choices)}")
        return value

    def settings(self) -> ApiSettings:
        return ApiSettings(
            concurrency=max(1, self.concurrency),
            max_retries=self.integer("max_retries", 6, 0),
            timeout=self.number("timeout", 120.0, 0.001),
            backoff=self.number("backoff", 1.0, 0.0),
            max_backoff=self.number("max_backoff", 60.0, 0.0),
            jpeg_quality=self.integer("jpeg_quality", None, 1, 100),
        )

    def api_key(self, default_envs: Sequence[str], required: bool) -> str | None:
        """The key from `api_key_env` or the first of `default_envs` that is set."""
        chosen = self.text("api_key_env")
        if chosen is not None and not ENV_NAME.fullmatch(chosen):  # never echo: it may be a key
            raise ConfigError(
                f"model {self.model!r}: {self.flag} api_key_env takes the NAME of an environment "
                "variable (e.g. OPENAI_API_KEY), not the key itself"
            )
        if chosen is not None:
            value = os.environ.get(chosen)
            if not value:
                raise ConfigError(
                    f"model {self.model!r}: {self.flag} api_key_env={chosen} names an "
                    "environment variable that is not set"
                )
            return value
        for name in default_envs:
            if os.environ.get(name):
                return os.environ[name]
        if required:
            raise ConfigError(
                f"model {self.model!r} needs an API key: set {' or '.join(default_envs)} "
                f"(or name another variable with {self.flag} api_key_env=NAME)"
            )
        return None

    def access(self, api_key: str | None, endpoint: str) -> ApiAccess:
        return ApiAccess(self.model, self.settings(), api_key, endpoint)

    def provider_access(self, key_envs: Sequence[str], url_env: str, default_url: str) -> ApiAccess:
        """A provider's API: the key required (`api_key_env` or the first of `key_envs` set), the
        base URL from the option, else `url_env`, else `default_url`."""
        return self.access(
            self.api_key(key_envs, required=True), self.base_url(url_env, default_url)
        )

    def base_url(self, env: str | None, default: str) -> str:
        """`base_url` option, else the provider's usual environment variable, else `default`."""
        url = self.text("base_url") or (os.environ.get(env) if env else None) or default
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"model {self.model!r}: base URL {url!r} is not an http(s) URL")
        return url.rstrip("/")


def sdk_options(spec: str, sdk: str, options: ModelOptions, known: Sequence[str]) -> OptionReader:
    """The options of API model `spec`, once its SDK (the `api` extra) is known installed."""
    require(f"model {spec!r}", (sdk,), "api")
    return OptionReader(spec, options, known)


def named_model_options(
    scheme: str, name: str, example: str, sdk: str, options: ModelOptions, known: Sequence[str]
) -> OptionReader:
    """The options of `SCHEME:NAME`, a provider's model by name (`example` when it is missing)."""
    if not name:
        raise ConfigError(f"model '{scheme}:MODEL' needs a model name, e.g. {scheme}:{example}")
    return sdk_options(f"{scheme}:{name}", sdk, options, known)
