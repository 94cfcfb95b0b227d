"""`--model-opt` settings shared by the API backends, and API keys from the environment.

Every value is checked when the model is built, so a typo stops the run before any work.
Keys are read from environment variables only and never put in a spec, identity or message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from vidbench.core.errors import ConfigError
from vidbench.models.registry import ModelOptions, reject_extra

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


class OptionReader:
    """Typed access to `--model-opt KEY=VALUE`, with errors that name the model and key."""

    def __init__(self, model: str, options: ModelOptions, known: Sequence[str]) -> None:
        reject_extra(model, options, tuple(known))
        self.model = model
        self.extra = options.extra
        self.flag = options.flag

    def _bad(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"model {self.model!r}: {self.flag} {key}={self.extra[key]!r}: {why}")

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
        try:
            value = int(self.extra[key])
        except ValueError:
            raise self._bad(key, "expected a whole number") from None
        if value < low or (high is not None and value > high):
            raise self._bad(key, f"expected {low}..{high}" if high else f"expected >= {low}")
        return value

    def number(self, key: str, default: float, low: float) -> float:
        if key not in self.extra:
            return default
        try:
            value = float(self.extra[key])
        except ValueError:
            raise self._bad(key, "expected a number of seconds") from None
        if not value >= low:
            raise self._bad(key, f"expected a number >= {low:g}")
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str | None:
        value = self.extra.get(key)
        if value is not None and value not in choices:
            raise self._bad(key, f"expected one of {', '.join(choices)}")
        return value

    def settings(self, options: ModelOptions) -> ApiSettings:
        return ApiSettings(
            concurrency=max(1, options.concurrency),
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

    def base_url(self, env: str | None, default: str) -> str:
        """`base_url` option, else the provider's usual environment variable, else `default`."""
        url = self.text("base_url") or (os.environ.get(env) if env else None) or default
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"model {self.model!r}: base URL {url!r} is not an http(s) URL")
        return url.rstrip("/")
