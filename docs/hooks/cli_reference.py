"""The CLI reference page, generated from `vidbench.cli.build_parser()` at every docs build.

mkdocs runs this file as a hook (mkdocs.yml `hooks:`): on the page `reference/cli.md` the line
`<!-- cli-reference -->` becomes one section per command and subcommand: its help, its usage line
and a table of its arguments. Nothing of it is written by hand, so it follows the parser. argparse
has no Markdown output, and the one MkDocs plugin for argparse is an early 0.0.1, hence these few
functions over argparse's own structures (its HelpFormatter does the usage lines and `%(default)s`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

PAGE = "reference/cli.md"
MARKER = "<!-- cli-reference -->"


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("vidbench",), summary: str = ""
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command's path, one-line help and parser, depth first, in the parser's order."""
    yield path, summary, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name), helps.get(name, ""))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _name(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        listed = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
        metavar = action.metavar or listed or action.dest.upper()
        metavar = " " + (f"[{metavar}]" if action.nargs == "?" else str(metavar))
    return ", ".join(f"`{option}{metavar}`" for option in action.option_strings)


def _meaning(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        listed = ", ".join(f"`{c}`" for c in action.choices)
        text = f"{text} (one of {listed})" if text else f"one of {listed}"
    if action.required and action.option_strings:
        text = f"**required**; {text}" if text else "**required**"
    return _cell(text)


def _default(action: argparse.Action) -> str:
    value: Any = action.default
    if action.nargs == 0 or value is None or value == argparse.SUPPRESS or value == []:
        return ""
    return f"`{_cell(str(value))}`"


def section(path: tuple[str, ...], summary: str, parser: argparse.ArgumentParser) -> str:
    level = "#" * min(len(path) + 1, 4)
    lines = [f"{level} `{' '.join(path)}`", ""]
    if summary or parser.description:
        lines += [_cell(summary or parser.description or ""), ""]
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```text", usage, "```", ""]
    for group in parser._action_groups:
        shown = [
            a
            for a in group._group_actions
            if a.help != argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
        ]
        if not shown:
            continue
        lines += [f"*{group.title}*", "", "| argument | meaning | default |", "| --- | --- | --- |"]
        lines += [f"| {_name(a)} | {_meaning(parser, a)} | {_default(a)} |" for a in shown]
        lines.append("")
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        names = ", ".join(
            f"[`{' '.join(path)} {name}`](#{'-'.join((*path, name)).lower()})"
            for name in action.choices
        )
        lines += [f"Commands: {names}.", ""]
    return "\n".join(lines)


def reference(parser: argparse.ArgumentParser) -> str:
    return "\n".join(section(*found) for found in commands(parser))


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} must hold the line {MARKER}")
    from vidbench.cli import build_parser

    return markdown.replace(MARKER, reference(build_parser()))
