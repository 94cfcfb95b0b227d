"""Optional dependencies: stop at once, naming the extra to install, when one is missing; and
`lazy`, which names a function whose module (and the libraries it needs) is imported only when
the function is called."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

from vidbench.core.errors import ConfigError


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing (e.g. google for google.genai)
        return False


def require(user: str, modules: Sequence[str], extra: str) -> None:
    """Raise ConfigError "USER needs M (not installed): pip install 'vidbench[EXTRA]'"."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        raise ConfigError(
            f"{user} needs {', '.join(missing)} (not installed): pip install 'vidbench[{extra}]'"
        )


def lazy(module: str, name: str) -> Callable[..., Any]:
    """The function `module.name`, imported only when called: a Benchmark value names its
    validator and commands this way and the model registry its backends' factories, so building
    either imports nothing heavy."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = f"{module}.{name}"
    return call
