"""The structure docs/architecture.md describes, checked on the code itself: imports point down
the layers, no two modules import each other (directly or round a circle), the framework imports
no benchmark (it reads them from the registry), and no module grows past 600 lines.

Every import counts, also one inside a function or under TYPE_CHECKING: what a module names is
what it depends on. `from package import module` is an import of that module.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# (package or module, layer): a module imports only its own layer or lower ones
LAYERS = {
    "vidbench.core": 1,
    "vidbench.console": 1,
    "vidbench.progress": 1,
    "vidbench.extras": 1,
    "vidbench.media": 2,
    "vidbench.models": 3,
    "vidbench.scoring": 3,
    "vidbench.tasks": 4,
    "vidbench.benchmark": 4,
    "vidbench.registry": 4,
    "vidbench.testing": 4,
    "vidbench.cli_types": 4,
    "vidbench.report": 5,
    "vidbench.cli_options": 5,
    "vidbench.runner": 6,
    "vidbench.annotate": 6,
    "vidbench.export": 6,
    "vidbench.view": 7,
    "vidbench.analyze": 7,
    "vidbench.audit": 7,
    "vidbench.benchmarks": 8,
    "vidbench.cli": 9,
    "vidbench": 7,  # the package itself: its version and the public names, from every layer
}
MOST_LINES = 600  # modules are grouped by concept; a file past this usually holds two


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in (SRC / "vidbench").rglob("*.py")}


def _imports(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(0, node.level - 1)):
                base = base.rpartition(".")[0]
            target = node.module or "" if not node.level else f"{base}.{node.module or ''}"
            target = target.rstrip(".")
            submodules = {f"{target}.{a.name}" for a in node.names} & MODULES.keys()
            found.update(submodules or {target})
    return {name for name in found if name in MODULES and name != module}


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def test_the_graph_is_read() -> None:
    assert len(MODULES) > 250
    assert "vidbench.runner.store" in GRAPH["vidbench.runner.run"]
    assert "vidbench.benchmarks.fourd.loader" in GRAPH["vidbench.benchmarks.fourd.review.items"]


def test_imports_point_down_the_layers() -> None:
    upward = sorted(
        f"{a} -> {b}" for a, targets in GRAPH.items() for b in targets if layer(b) > layer(a)
    )
    assert upward == []


def test_no_import_circles() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in GRAPH[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                circles.append(sorted([node, *component]))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert circles == []


def test_the_framework_imports_no_benchmark() -> None:
    """Only the benchmarks themselves, their registry and the command line name a benchmark."""
    reaching = sorted(
        f"{a} -> {b}"
        for a, targets in GRAPH.items()
        for b in targets
        if b.startswith("vidbench.benchmarks.")
        and not a.startswith("vidbench.benchmarks")
        and a != "vidbench.cli"
    )
    assert reaching == []


def test_a_benchmark_imports_no_other_benchmark() -> None:
    def owner(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if module.startswith("vidbench.benchmarks.") and len(parts) > 2 else None

    crossing = defaultdict(set)
    for a, targets in GRAPH.items():
        for b in targets:
            if owner(a) and owner(b) and owner(a) != owner(b) and owner(a) != "registry":
                crossing[a].add(b)
    assert dict(crossing) == {}


def test_every_module_is_small() -> None:
    lines = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in lines.items() if n > MOST_LINES} == {}


def test_every_name_given_as_a_string_exists() -> None:
    """What vidbench imports by name, not by an import statement, is there: each
    `lazy(module, name)` and each built-in benchmark registry.BUILT_IN lists."""
    import importlib

    from vidbench.registry import BUILT_IN

    named = [tuple(value.split(":")) for value in BUILT_IN]
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy":
                named.append(tuple(arg.value for arg in node.args))  # type: ignore[attr-defined]
    assert len(named) > 20
    missing = [f"{m}:{n}" for m, n in named if not hasattr(importlib.import_module(m), n)]
    assert missing == []
