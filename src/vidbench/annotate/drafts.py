"""Machine drafts on an item (a model's caption a person may start from): a text submitted
word for word as a draft is the model's, not a person's, and no export counts it."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue


def draft_source(item_data: Mapping[str, JsonValue], caption: str) -> str | None:
    """The model whose draft this caption is, word for word (whitespace aside), or None."""
    words = " ".join(caption.split())
    drafts = item_data.get("drafts")
    for draft in drafts if isinstance(drafts, list) else []:
        text = draft.get("caption") if isinstance(draft, dict) else None
        if isinstance(draft, dict) and isinstance(text, str) and " ".join(text.split()) == words:
            return str(draft.get("model"))
    return None
