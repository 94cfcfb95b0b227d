"""Token usage as the store keeps it: a reply that reported no usage (Usage.unknown) is stored
as UNKNOWN_TOKENS in and out, summed as 0 tokens and counted as a call of unknown usage."""

from __future__ import annotations

from vidbench.core.requests import UNKNOWN_USAGE_KEY, Usage

UNKNOWN_TOKENS = -1  # the tokens of a reply that reported no usage
# a table's token totals, with the unknown counted as 0 (store.py's usage queries)
TOKEN_SUMS = (
    "COALESCE(SUM(MAX(input_tokens, 0)), 0), COALESCE(SUM(MAX(output_tokens, 0)), 0), "
    f"COALESCE(SUM(input_tokens = {UNKNOWN_TOKENS}), 0)"
)


def stored_tokens(usage: Usage) -> tuple[int, int]:
    """What a reply's usage is stored as: its tokens in and out, or UNKNOWN_TOKENS twice."""
    if usage.unknown:
        return UNKNOWN_TOKENS, UNKNOWN_TOKENS
    return usage.input_tokens, usage.output_tokens


def usage_record(requests: int, t_in: int, t_out: int, unknown: int) -> dict[str, int]:
    """Calls and tokens in/out; `unknown_usage`: the calls among them whose reply reported no
    usage (only when there are some: their tokens are not in the totals)."""
    record = {"requests": requests, "input_tokens": t_in, "output_tokens": t_out}
    return {**record, UNKNOWN_USAGE_KEY: unknown} if unknown else record
