"""Prompts kept as versioned package files, so a prompt is read, reviewed and diffed as text.

A prompt lives in a package's `prompts/` folder as `NAME.vN.txt` (e.g. `audio_questions.v1.txt`):
the version is part of the file name, so changing a prompt means adding `NAME.v2.txt` and pointing
the code at it, and the old one stays for runs that cite it. The text is a `string.Template`
(`$field` placeholders), not `str.format`, because prompts quote JSON with literal braces.

The version label (`PACKAGE/NAME.vN`) goes into every ModelCall's `prompt_version`; the exact
prompt text is in the store key as well, so even an edited file never reuses an old reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from vidbench.core.errors import ConfigError

_NAME = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)\.txt$")


@dataclass(frozen=True)
class PromptFile:
    """One prompt template and the version label it is stored under."""

    name: str  # e.g. "audio_questions"
    version: str  # e.g. "mmworld-curate/audio_questions.v1"
    template: Template

    def render(self, **fields: object) -> str:
        """The prompt with every `$field` filled; a missing field is a bug, so it raises."""
        try:
            return self.template.substitute({k: str(v) for k, v in fields.items()})
        except KeyError as e:
            raise ConfigError(f"prompt {self.version} needs the field {e.args[0]!r}") from None


@cache
def load_prompt(package: str, filename: str, label: str) -> PromptFile:
    """The prompt `filename` (`NAME.vN.txt`) in `package`'s `prompts/` folder; `label` names
    the prompt family in its version (e.g. "mmworld-curate")."""
    match = _NAME.match(filename)
    if match is None:
        raise ConfigError(f"prompt file {filename!r} is not named NAME.vN.txt")
    try:
        text = (resources.files(package) / "prompts" / filename).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as e:
        raise ConfigError(f"prompt file {package}/prompts/{filename} is missing ({e})") from e
    name = match.group("name")
    return PromptFile(name, f"{label}/{name}.v{match.group('version')}", Template(text))
