"""Checked option values for the `vidbench` command line (argparse `type=` functions).

A value out of range stops the command at parse time with one line naming the flag, e.g.
`vidbench run: error: argument --limit: must be a whole number >= 1, got '0'` (exit code 2),
before anything is loaded. A value given to a key option is never repeated in a message.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from vidbench.media.spec import RING_VIEWS as VIEWS_PER_OBJECT  # view ids 0..23
from vidbench.models.api_options import ENV_NAME


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number in low..high."""
    bound = f">= {low}" if high is None else f"in {low}..{high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a whole number {bound}, got {text!r}"
            ) from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be a whole number {bound}, got {text!r}")
        return value

    return parse


def number(low: float, high: float | None = None, low_open: bool = False) -> Callable[[str], float]:
    """A number in [low, high] ((low, high] when `low_open`)."""
    bound = f"{'>' if low_open else '>='} {low:g}" + ("" if high is None else f" and <= {high:g}")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {bound}, got {text!r}") from None
        too_low = value <= low if low_open else value < low
        if too_low or (high is not None and value > high) or value != value:
            raise argparse.ArgumentTypeError(f"must be a number {bound}, got {text!r}")
        return value

    return parse


positive = whole_number(1)
non_negative = whole_number(0)
port = whole_number(1, 65535)
port_or_free = whole_number(0, 65535)  # 0: the system picks a free port


def max_side(text: str) -> int:
    """0 (the video's own size) or a longest side of at least 8 pixels."""
    value = non_negative(text)
    if 0 < value < 8:
        raise argparse.ArgumentTypeError(f"must be 0 (the video's own size) or >= 8, got {text!r}")
    return value


def views(text: str) -> str:
    """A view count 1..24 or view ids 0..23 ("1,8,16"), as `media.spec.parse_views` reads them."""
    parts = [p.strip() for p in text.split(",")] if "," in text else [text.strip()]
    if not all(p.isdigit() for p in parts if p) or not any(parts):
        raise argparse.ArgumentTypeError(f"expected a view count or ids like 1,8,16, got {text!r}")
    numbers = [int(p) for p in parts if p]
    if "," in text:
        bad = [n for n in numbers if n >= VIEWS_PER_OBJECT]
        if bad:
            raise argparse.ArgumentTypeError(
                f"view ids are 0..{VIEWS_PER_OBJECT - 1} ({VIEWS_PER_OBJECT} views per object), "
                f"got {bad[0]}"
            )
    elif not 1 <= numbers[0] <= VIEWS_PER_OBJECT:
        raise argparse.ArgumentTypeError(f"a view count is 1..{VIEWS_PER_OBJECT}, got {numbers[0]}")
    return text


def env_name(text: str) -> str:
    """The NAME of an environment variable. Never echoes the value: it may be a pasted key."""
    if not ENV_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            "takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself"
        )
    return text
