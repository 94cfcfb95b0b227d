"""Machine drafts on an item (a model's caption a person may start from): a text submitted
word for word as a draft is the model's, not a person's, and no export counts it."""

from __future__ import annotations

from typing import Any


def draft_source(item_data: dict[str, Any], caption: str) -> str | None:
    """The model whose draft this caption is, word for word (whitespace aside), or None."""
    words = " ".join(caption.split())
    for draft in item_data.get("drafts", []):
        if " ".join(draft["caption"].split()) == words:
            return str(draft["model"])
    return None
