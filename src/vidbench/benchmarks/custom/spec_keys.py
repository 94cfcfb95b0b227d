"""The keys of one table of benchmark.toml, each read once and checked as it is read: the
messages name the file and the key and what it may hold, and suggest the key meant when one is
misspelt (checked by hand rather than by a schema library: pydantic's messages would not, and it
is not a dependency of the core package)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import paths
from vidbench.core.errors import ConfigError

MISSING = object()  # a key without a default: required


class Keys:
    """The keys of one TOML table, each read once; what is left over is an error."""

    def __init__(self, raw: dict[str, Any], file: Path, table: str = "") -> None:
        self.raw, self.file, self.table = dict(raw), file, table
        self.read: set[str] = set()

    def _where(self, key: str) -> str:
        return f"{self.file}: key {self.table + key!r}"

    def fail(self, key: str, what: str) -> ConfigError:
        return ConfigError(f"{self._where(key)}: {what}")

    def get(self, key: str, default: Any = MISSING) -> Any:
        self.read.add(key)
        if key in self.raw:
            return self.raw[key]
        if default is MISSING:
            raise ConfigError(f"{self._where(key)} is missing")
        return default

    def text(self, key: str, default: Any = MISSING, choices: tuple[str, ...] = ()) -> Any:
        value = self.get(key, default)
        if value is default and default is not MISSING:
            return value
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        if choices and value not in choices:
            raise self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def texts(self, key: str, default: Any = MISSING) -> Any:
        """A string or a list of strings, as a tuple."""
        value = self.get(key, default)
        if value is default and default is not MISSING:
            return value
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not values:
            raise self.fail(key, f"expected a string or a list of strings, got {value!r}")
        for item in values:
            if not isinstance(item, str) or not item.strip():
                raise self.fail(key, f"expected strings, got {item!r}")
        return tuple(values)

    def path(self, key: str, default: Any = MISSING) -> Any:
        """A field path (paths.py: `meta.video_id`, `choices[].text`)."""
        value = self.text(key, default)
        if value is default and default is not MISSING:
            return value
        check_path(self, key, value)
        return value

    def paths(self, key: str, default: Any = MISSING) -> Any:
        values = self.texts(key, default)
        if values is default and default is not MISSING:
            return values
        for value in values:
            check_path(self, key, value)
        return values

    def integer(self, key: str, default: Any, low: int) -> Any:
        value = self.get(key, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(key, f"expected a whole number >= {low}, got {value!r}")
        return value

    def number(self, key: str, default: float, low: float) -> float:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            raise self.fail(key, f"expected a number >= {low}, got {value!r}")
        return float(value)

    def done(self) -> None:
        unknown = sorted(set(self.raw) - self.read)
        if unknown:
            key = unknown[0]
            close = difflib.get_close_matches(key, sorted(self.read), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{self._where(key)}: unknown key{hint} (known: {', '.join(sorted(self.read))}; "
                "docs/custom-benchmarks.md)"
            )


def check_path(keys: Keys, key: str, path: str) -> str:
    try:
        paths.parse(path)
    except ValueError as e:
        raise keys.fail(key, str(e)) from e
    return path


def check_template(keys: Keys, key: str, template: str) -> str:
    """A `{field}` template over field paths (a stray brace is an error here)."""
    try:
        paths.fields_of(template)
    except ValueError as e:
        raise keys.fail(key, f"not a template ({e}; write a literal brace as {{{{ or }}}})") from e
    return template
