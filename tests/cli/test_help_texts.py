"""Every option of every command says what it is (`--help` never leaves one without a word), and
every count is checked at parse time (a plain `int` only where any whole number is meaning-
ful: seeds)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from vidbench.cli import build_parser, main

ANY_WHOLE_NUMBER = {"seed", "gen_seed", "human_seed", "expect"}  # seeds; a verdict 0 or 1


def actions(parser: argparse.ArgumentParser, path: str = "vidbench") -> Iterator[tuple]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from actions(sub, f"{path} {name}")
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield path, action


ALL = list(actions(build_parser()))


def test_the_parser_has_every_command() -> None:
    commands = {path for path, _ in ALL}
    assert {"vidbench run", "vidbench synth 4d", "vidbench curate 4d render",
            "vidbench curate mmworld all", "vidbench annotate serve"} <= commands  # fmt: skip
    assert len(ALL) > 300


def test_every_option_has_help_text() -> None:
    silent = [
        f"{command} {'/'.join(a.option_strings) or a.dest}"
        for command, a in ALL
        if not (a.help and a.help.strip())
    ]
    assert silent == []


def test_counts_are_checked_at_parse_time() -> None:
    loose = [
        f"{command} {'/'.join(a.option_strings)}"
        for command, a in ALL
        if a.type is int and a.dest not in ANY_WHOLE_NUMBER
    ]
    assert loose == []


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "errors", "r", "--judge", "j", "--concurrency", "0"],
        ["curate", "mmworld", "queries", "--out", "o", "--model", "m", "--concurrency", "0"],
        ["curate", "mmworld", "all", "v", "--out", "o", "--model", "m", "--questions", "0"],
        ["curate", "4d", "motion", "v", "--min-length", "0"],
    ],
)
def test_a_zero_count_is_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "must be a whole number >= 1, got '0'" in capsys.readouterr().err
