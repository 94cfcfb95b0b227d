"""Optional dependencies: stop at once, naming the extra to install, when one is missing."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

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
