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


def test_the_help_says_what_vidbench_does_and_lists_the_commands_by_job(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    usage = text.splitlines()[0]
    assert usage == "usage: vidbench [--no-progress] [--version] COMMAND ..."  # no {a,b,...}
    assert "vidbench evaluates multimodal LLMs on video and 4D object understanding" in text
    assert "Thin:" not in text
    titles = ["evaluate models:", "look at results:", "build benchmarks:", "review with people:"]
    at = [text.index(f"\n{title}\n") for title in titles]
    assert at == sorted(at) and "other commands:" not in text
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {
        line.split()[0]
        for line in text[at[0] :].splitlines()
        if line.startswith("  ") and line.strip()
    }
    assert listed == set(commands.choices)  # every command once, each under its job


def test_every_command_has_a_group() -> None:
    from vidbench.cli import COMMAND_GROUPS

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    grouped = [name for names in COMMAND_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(commands.choices)  # a new command: add it to a group
