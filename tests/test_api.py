"""The public API: every name `vidbench` exports resolves (lazily, to the object its module
defines), the names a type checker sees are the same ones, and docs/reference/api.md documents
each under the module that defines it."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import vidbench

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "src" / "vidbench" / "__init__.py"


def test_every_export_resolves_to_its_modules_object() -> None:
    exported = {**vidbench._EXPORTS, **vidbench._MODULES}
    assert set(vidbench.__all__) == {"__version__", *exported}
    for name, module in vidbench._EXPORTS.items():
        assert getattr(vidbench, name) is getattr(importlib.import_module(module), name), name
    assert vidbench.outcome is importlib.import_module("vidbench.scoring.outcome")


def test_a_type_checker_sees_the_same_names() -> None:
    tree = ast.parse(INIT.read_text())
    [checking] = [n for n in tree.body if isinstance(n, ast.If)]  # if TYPE_CHECKING:
    seen = {
        alias.name: f"{node.module}.{alias.name}"
        if alias.name in vidbench._MODULES
        else node.module
        for node in checking.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == {**vidbench._EXPORTS, **vidbench._MODULES}


def test_the_api_page_documents_every_export() -> None:
    page = (ROOT / "docs" / "reference" / "api.md").read_text()
    documented = {
        line.removeprefix("::: ").strip() for line in page.splitlines() if line.startswith("::: ")
    }
    missing = [
        name
        for name, module in {**vidbench._EXPORTS, **vidbench._MODULES}.items()
        if (module if name in vidbench._MODULES else f"{module}.{name}") not in documented
    ]
    assert missing == []
    assert "`vidbench run` calls `launch(RunRequest(...))`" in page


def test_importing_vidbench_imports_no_export() -> None:
    code = "import sys, vidbench; print(sorted(m for m in sys.modules if 'vidbench' in m))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "['vidbench']"


# A task's score built from its own dicts, as a plugin's author writes it: SampleScore's maps
# take them (a dict[str, JsonValue] parameter would refuse a dict[str, int]: invariance).
OWN_DICTS = """
from vidbench import SampleScore, outcome


def score(shape: str, options: int, cider: float) -> SampleScore:
    groups = {"shape": shape}
    details = {"options": options}
    metrics = {"CIDEr": cider}
    right = outcome.graded(True)
    return SampleScore(outcome=right, groups=groups, details=details, metrics=metrics)
"""


def test_the_example_plugins_type_check_strictly_against_the_exports(tmp_path: Path) -> None:
    """The docs' example benchmark and model backend, checked as their authors would check
    them (`mypy --strict`): every name they take `from vidbench` is an explicit export, and the
    types they implement (Task, Model, SampleScore, Json) need no Any and no private name."""
    examples = ROOT / "docs" / "examples"
    (tmp_path / "own_dicts.py").write_text(OWN_DICTS)
    path = [ROOT / "src", examples / "toy-benchmark", examples / "pick-backend", tmp_path]
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), "-p", "toybench", "-m", "pickmodel",
         "-m", "own_dicts"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "MYPYPATH": os.pathsep.join(map(str, path))},
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no issues found in 7 source files" in checked.stdout
