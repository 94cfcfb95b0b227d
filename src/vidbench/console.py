"""The terminal: one console for what a command produces (stdout) and one for messages,
warnings and progress bars (stderr), shared by every command so output never interleaves."""

from __future__ import annotations

from rich.console import Console

out = Console()
err = Console(stderr=True)


def roomy(console: Console, width: int = 160) -> Console:
    """`console`, or for a pipe or a file (a log), the same file with room for a wide table
    (rich would wrap its cells at 80 columns there)."""
    if console.is_terminal:
        return console
    return Console(file=console.file, width=max(console.width, width))
