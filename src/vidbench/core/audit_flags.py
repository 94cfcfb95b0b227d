"""The flag kinds an audit writes into audit.json, in the order it lists them: the audit
(audit/) writes them, the review queue (annotate/audit_queue.py) refuses any other kind, and a
benchmark's decisions record the ones people kept (Task.reviewed). Here, below both, so that the
queue reads the audit's own list (annotate sits below audit)."""

from __future__ import annotations

FLAG_KINDS = ("gold", "blind", "chance", "easy", "negative", "duplicate")
