"""Running `vidbench` with plugins installed, and plugins made on the spot (tests/conftest.py
installs the example packages of docs/examples as fixtures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def fake_plugin(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> Path:
    """A package in `site` as pip would leave it: its modules and its entry points."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    for module, text in modules.items():
        (site / f"{module}.py").write_text(text)
    return site


def run_vidbench(
    sites: list[Path], *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`vidbench ARGV` with the packages in `sites` installed (on the path)."""
    path = [str(site) for site in sites] + [os.environ.get("PYTHONPATH", "")]
    return subprocess.run(
        [sys.executable, "-m", "vidbench.cli", "--no-progress", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
        timeout=300,
    )


def refused(said: str) -> list[str]:
    """The lines of a command's messages that say a plugin was skipped (not a bad row)."""
    return [line for line in said.splitlines() if line.startswith("skipped") and "plugin" in line]
