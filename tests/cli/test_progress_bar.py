"""Progress bars keep their numbers readable: a long description (a model spec, a custom
benchmark's folder) is cut with "…" in its middle, never the count, the rate or the ETA."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from vidbench.progress import progress_bar

LONG = "infer custom:/data/benchmarks/ball-clips · openai-compat:http://127.0.0.1:8100/v1#Qwen/" \
    "Qwen2.5-VL-72B-Instruct"  # fmt: skip


@pytest.mark.parametrize("width", [60, 80, 120])
def test_a_long_description_is_cut_and_the_numbers_stay_whole(width: int) -> None:
    file = io.StringIO()
    console = Console(file=file, width=width, force_terminal=True, color_system=None)
    with progress_bar(console=console) as bar:
        task = bar.add_task(LONG, total=751)
        bar.update(task, completed=310)
        bar.refresh()
    frames = [f for f in re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", file.getvalue()).split("\r") if f]
    last = frames[-1].strip()
    assert len(last) <= width, last
    assert "…" in last and "310/751" in last
    head, _, rest = last.partition("…")  # cut in its middle: the stage and the model's end stay
    assert LONG.startswith(head) and LONG.endswith(rest.split()[0]) and len(head) >= 5
    assert re.search(r"(\d+\.\d|\d+k|\?)/s\s+0:00:\d\d ETA (\d:\d\d:\d\d|-:--:--)$", last), last


def test_a_short_description_is_shown_whole() -> None:
    file = io.StringIO()
    console = Console(file=file, width=80, force_terminal=True, color_system=None)
    with progress_bar(console=console) as bar:
        bar.add_task("score", total=20, completed=20)
    assert "score " in file.getvalue() and "…" not in file.getvalue()
