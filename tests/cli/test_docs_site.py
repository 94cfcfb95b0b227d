"""The documentation site: the CLI reference generated from the parser covers every command and
option, and the site builds offline and strict, with the benchmark READMEs inside their pages."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from examples_support import ROOT
from vidbench.cli import build_parser


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "docs/hooks/cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_has_every_command_and_option() -> None:
    hook = _hook()
    parser = build_parser()
    text = hook.reference(parser)
    found = list(hook.commands(parser))
    assert len(found) > 40  # run, validate, ..., curate 4d render, annotate users add, ...
    for path, _, command in found:
        assert f"`{' '.join(path)}`" in text, path
        for action in command._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"`{option}" in text, (path, option)
    run = text[text.index("### `vidbench run`") :]
    assert "| `--out DIR` | **required**; results directory |  |" in run
    assert "| `--concurrency N` | model calls in flight at once (default 16) | `16` |" in run


def test_the_page_holds_the_marker_the_hook_replaces() -> None:
    hook = _hook()
    page = (ROOT / "docs" / hook.PAGE).read_text()
    assert page.count(hook.MARKER) == 1

    class Page:
        class file:  # mkdocs' page.file.src_uri, as the hook reads it
            src_uri = hook.PAGE

    built = hook.on_page_markdown(page, page=Page)
    assert hook.MARKER not in built and "### `vidbench sweep`" in built


@pytest.mark.slow
def test_site_builds_offline_and_strict(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    cli = (site / "reference/cli.html").read_text()
    assert 'id="vidbench-curate-4d-render"' in cli and "--max-frames" in cli
    for page, readme in [
        ("4d-bench", "fourd"),
        ("mmworld", "mmworld"),
        ("autoeval-video", "autoeval_video"),
    ]:
        html = (site / f"reference/{page}.html").read_text()
        first = (ROOT / f"src/vidbench/benchmarks/{readme}/README.md").read_text().splitlines()[0]
        assert first.removeprefix("# ").split(":")[0] in html, page  # the README is included
    api = (site / "reference/api.html").read_text()
    assert "extract_choice" in api and "FrameSpec" in api  # mkdocstrings rendered
    external = set()
    for html in site.rglob("*.html"):
        external |= set(
            re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html.read_text())
        )
    assert external == set(), external  # no fonts, scripts or styles from the network
