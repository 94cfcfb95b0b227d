"""System messages for the APIs that take them apart from the turns (Anthropic, Gemini)."""

from __future__ import annotations

from collections.abc import Sequence

from vidbench.core.messages import Message


def split_system(messages: Sequence[Message], refusal: str) -> tuple[str | None, list[Message]]:
    """(the system messages' text joined by blank lines, or None; the other messages in order).

    No such API takes images in its system field: a system message with one raises
    ValueError(`refusal`)."""
    system: list[str] = []
    turns: list[Message] = []
    for message in messages:
        if message.role != "system":
            turns.append(message)
            continue
        if message.images:
            raise ValueError(refusal)
        system.append(message.text)
    return ("\n\n".join(system) or None), turns
