"""Test helpers shipped with the package, so tests, bench scripts and users can dry-run vidbench.

`ChatServer` is a real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions,
Anthropic messages and Gemini generateContent APIs, with settable latency, capacity and fault
injection (chat_server.py; it needs the `testing` extra: fastapi, uvicorn). Synthetic datasets live
with their benchmark (e.g. benchmarks/fourd/synthetic).

Names are imported on first use, so `python -m vidbench.testing.chat_server` runs cleanly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vidbench.testing.chat_server import ChatServer
    from vidbench.testing.fake_apis import Reply, request_text
    from vidbench.testing.server_state import FaultPlan, ServerStats

__all__ = ["ChatServer", "FaultPlan", "Reply", "ServerStats", "request_text"]

_HOMES = {
    "ChatServer": "vidbench.testing.chat_server",
    "FaultPlan": "vidbench.testing.server_state",
    "ServerStats": "vidbench.testing.server_state",
    "Reply": "vidbench.testing.fake_apis",
    "request_text": "vidbench.testing.fake_apis",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'vidbench.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
