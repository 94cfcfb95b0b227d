"""Progress bars with count, rate and ETA (rich). The numbers always keep their room: a long
description (a long model spec, a custom benchmark's folder) is cut short with "…" in its middle
to fit the console (the stage at its start and the model's name at its end stay readable), never
the count, the rate or the times."""

from __future__ import annotations

from rich import get_console
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

# what the other columns take at most: "12345/12345", "999.9/s", "0:00:00" twice, "ETA", the gaps
# between the columns, and a bar of at least 8 cells
NUMBERS_WIDTH = 11 + 7 + 7 + 3 + 7 + 6 + 8
MIN_DESCRIPTION = 8


class RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            shown = "?/s"
        elif speed < 1000:
            shown = f"{speed:.1f}/s"
        else:  # at most 7 characters, as NUMBERS_WIDTH counts
            shown = f"{speed / 1000:.1f}k/s" if speed < 99_950 else f"{speed / 1000:.0f}k/s"
        return Text(shown, style="progress.data.speed")


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters: its start and its end with "…" between."""
    if len(text) <= width:
        return text
    head = width // 2
    tail = width - 1 - head  # and "…" between
    return text[:head] + "…" + (text[-tail:] if tail else "")


class DescriptionColumn(ProgressColumn):
    """The task's description, cut in its middle to what the console's width leaves after the
    numbers."""

    def __init__(self, console: Console) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.console = console

    def render(self, task: Task) -> Text:
        width = max(MIN_DESCRIPTION, self.console.width - NUMBERS_WIDTH)
        text = Text(cut_middle(task.description, width), style="bold", no_wrap=True)
        text.truncate(width, overflow="ellipsis")  # wide characters: cut by cells, not characters
        return text


def _fixed(min_width: int) -> Column:
    return Column(no_wrap=True, min_width=min_width)


def progress_bar(disable: bool = False, console: Console | None = None) -> Progress:
    console = console or get_console()
    return Progress(
        DescriptionColumn(console),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=8)),
        MofNCompleteColumn(table_column=_fixed(5)),
        RateColumn(table_column=_fixed(6)),
        TimeElapsedColumn(table_column=_fixed(7)),
        TextColumn("ETA", table_column=_fixed(3)),
        TimeRemainingColumn(table_column=_fixed(7)),
        console=console,
        disable=disable,
        expand=True,  # the bar takes what the description and the numbers leave
    )
