"""Money from token usage, by a price table the user provides.

vidbench ships no prices (they change and differ by contract). Point VIDBENCH_PRICES at a JSON
file of US dollars per million tokens, keyed by model spec:

    {"openai:gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10.0},
     "anthropic:claude-sonnet-4-5": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}

and results.json gets `cost` ({input, output, total} in USD, and the table used). A `blind:`
wrapper is priced as the model it wraps. Without the variable `cost` is null; with it, a model
missing from the table gets a cost whose total is null and a note saying so, never a guess.
A usage with calls whose reply reported no tokens (`unknown_usage`) gets a cost marked
`lower_bound`, with a note saying how many calls it leaves out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NotRequired, TypedDict

from vidbench.core.errors import ConfigError
from vidbench.core.requests import UNKNOWN_USAGE_KEY, usage_unknown

PRICES_ENV = "VIDBENCH_PRICES"


class Cost(TypedDict):
    """What a usage cost in US dollars (`total` None: the table has no price for the model)."""

    currency: str
    total: float | None
    table: str  # the price table's path
    note: NotRequired[str]
    input: NotRequired[float]
    output: NotRequired[float]
    per_mtok: NotRequired[dict[str, float]]
    lower_bound: NotRequired[bool]  # some calls reported no usage: they are not counted


def _tokens(usage: Mapping[str, object], key: str) -> int:
    count = usage.get(key, 0)
    return count if isinstance(count, int) else 0


def load_prices(path: Path) -> dict[str, tuple[float, float]]:
    """spec -> (input, output) USD per million tokens; ConfigError naming what is wrong."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path} ({PRICES_ENV}): cannot read the price table: {e}") from e
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} ({PRICES_ENV}): expected a JSON object keyed by model spec")
    prices = {}
    for spec, entry in raw.items():
        try:
            prices[spec] = (float(entry["input_per_mtok"]), float(entry["output_per_mtok"]))
        except (TypeError, KeyError, ValueError):
            raise ConfigError(
                f"{path} ({PRICES_ENV}): {spec!r} needs numbers input_per_mtok, output_per_mtok"
            ) from None
    return prices


def cost_of(spec: str, usage: Mapping[str, object]) -> Cost | None:
    """The cost of a run's usage ({input_tokens, output_tokens}), or None without a table."""
    location = os.environ.get(PRICES_ENV)
    if not location:
        return None
    path = Path(location)
    priced = spec
    while priced.startswith("blind:"):
        priced = priced.removeprefix("blind:")
    price = load_prices(path).get(priced)
    if price is None:
        return {
            "currency": "USD",
            "total": None,
            "table": str(path),
            "note": f"no price for {priced}",
        }
    spent_in = _tokens(usage, "input_tokens") * price[0] / 1e6
    spent_out = _tokens(usage, "output_tokens") * price[1] / 1e6
    cost: Cost = {
        "currency": "USD",
        "input": round(spent_in, 6),
        "output": round(spent_out, 6),
        "total": round(spent_in + spent_out, 6),
        "table": str(path),
        "per_mtok": {"input": price[0], "output": price[1]},
    }
    unknown = _tokens(usage, UNKNOWN_USAGE_KEY)
    if unknown:
        cost["lower_bound"] = True
        cost["note"] = f"at least: {usage_unknown(unknown)}"
    return cost
