"""The benchmark's own command: `vidbench toy-count DATA`."""

from __future__ import annotations

import argparse
from pathlib import Path

from toybench.loader import load
from vidbench import CommandGroups


def register(groups: CommandGroups) -> None:
    p = groups.top.add_parser("toy-count", help="count the toy questions in a folder")
    p.add_argument("data", help="a toy data folder")
    p.set_defaults(func=count)


def count(args: argparse.Namespace) -> int:
    print(f"{len(load(Path(args.data)).items)} toy questions")
    return 0
