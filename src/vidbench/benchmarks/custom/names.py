"""Task names of declared benchmarks: `custom:DIR`, with variants `custom:DIR:MOD+MOD`.

DIR is the folder holding benchmark.toml. Variants, after a last `:`, are `frames-N` (frames per
view), a sampler (`linspace`, `interval`, `keyframes`) and a multiple-choice parser (`extract`,
`letter`, `videomme`, `option-text`, which re-scores stored answers); a tail that is not all
variants is part of the folder's name. `vidbench sweep --variants frames-16` appends
`:frames-16`, as for every task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vidbench.benchmarks.custom.spec import PARSERS, SAMPLERS

PREFIX = "custom"
_FRAMES = re.compile(r"frames-[1-9]\d*")


def is_declared(name: str) -> bool:
    """Whether a task name is a declared benchmark's (`custom:DIR...`)."""
    return name.startswith(PREFIX + ":")


def is_variant(modifier: str) -> bool:
    return bool(_FRAMES.fullmatch(modifier)) or modifier in SAMPLERS or modifier in PARSERS


@dataclass(frozen=True)
class DeclaredName:
    folder: Path  # as written (relative to the working directory, or absolute)
    variants: str  # "" or e.g. "frames-16+videomme"

    @property
    def canonical(self) -> str:
        """The name with the folder made absolute: what run.json keeps, so a stored run re-opens
        its benchmark from any working directory and wherever the results folder moves."""
        folder = self.folder.expanduser().resolve()
        return f"{PREFIX}:{folder}" + (f":{self.variants}" if self.variants else "")


def split_name(name: str) -> DeclaredName:
    """`custom:DIR[:VARIANTS]` -> its folder and variants."""
    rest = name.removeprefix(PREFIX + ":")
    folder, _, tail = rest.rpartition(":")
    if folder and tail and all(is_variant(m) for m in tail.split("+")):
        return DeclaredName(Path(folder), tail)
    return DeclaredName(Path(rest), "")
