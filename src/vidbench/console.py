"""The terminal: one console for what a command produces (stdout) and one for messages,
warnings and progress bars (stderr), shared by every command so output never interleaves; and
`counted`, a count with its noun in the right number."""

from __future__ import annotations

from rich.console import Console


def _console(stderr: bool) -> Console:
    console = Console(stderr=stderr)
    # Into a pipe or a file (a log, CI's output), a line is not folded at 80 columns: a message
    # stays one line, and the path in it one word to copy or grep (rich would break it anywhere,
    # "vid" and "eos/hf"). A terminal folds at its own width, as before. Tables are not changed
    # by this (`roomy` gives them room).
    console.soft_wrap = not console.is_terminal
    return console


out = _console(stderr=False)
err = _console(stderr=True)


def roomy(console: Console, width: int = 160) -> Console:
    """`console`, or for a pipe or a file (a log), the same file with room for a wide table
    (rich would wrap its cells at 80 columns there)."""
    if console.is_terminal:
        return console
    return Console(file=console.file, width=max(console.width, width))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 item", "2 items" ("1 query", "2 queries" with `plural`). Hand-written: the nouns are
    vidbench's own, a library that inflects any English word is more than they need."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
