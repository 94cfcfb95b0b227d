"""The terminal: one console for what a command produces (stdout) and one for messages,
warnings and progress bars (stderr), shared by every command so output never interleaves."""

from __future__ import annotations

from rich.console import Console

out = Console()
err = Console(stderr=True)
