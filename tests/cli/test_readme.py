"""The README's offline examples run as written.

A fenced ```bash block right after the line `<!-- readme-test: offline -->` needs no key, GPU or
downloaded data: this test runs every such block, in README order, in one working folder that
holds what they name (tests/examples_support.py), with the `vidbench` of this environment first
on PATH. Blocks that need keys, GPUs or a real release under /data stay unmarked. Benchmark
READMEs (src/vidbench/benchmarks/*/README.md) are read too. The pages under docs/ have their own
test (test_docs_examples.py), where every shell block runs unless marked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from examples_support import ROOT, example_folder, make_inputs, run_blocks

MARKED = re.compile(r"<!-- readme-test: offline -->\s*\n```bash\n(.*?)```", re.S)


def offline_blocks() -> list[tuple[str, str]]:
    readmes = [ROOT / "README.md", *sorted(ROOT.glob("src/vidbench/benchmarks/*/README.md"))]
    return [
        (f"{path.relative_to(ROOT)} block {i + 1}", block)
        for path in readmes
        for i, block in enumerate(MARKED.findall(path.read_text(encoding="utf-8")))
    ]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inputs = make_inputs(tmp_path_factory.mktemp("readme-inputs") / "inputs")
    return example_folder(inputs, tmp_path_factory.mktemp("readme") / "work")


def test_the_readme_marks_offline_blocks() -> None:
    names = [name for name, _ in offline_blocks()]
    assert len(names) >= 5, names


@pytest.mark.slow
@pytest.mark.parametrize(("name", "block"), offline_blocks(), ids=lambda v: v.split("\n")[0])
def test_offline_block_runs_as_written(name: str, block: str, workdir: Path) -> None:
    code, output = run_blocks([(name, block)], workdir)
    assert code == 0, f"{name} failed:\n{block}\n{output}"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readmes_relative_links_resolve() -> None:
    """A page moved under docs/ leaves no README pointing at its old place (mkdocs checks docs/)."""
    readmes = [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "bench" / "README.md",
        *sorted(ROOT.glob("src/vidbench/benchmarks/*/README.md")),
    ]
    broken = [
        f"{path.relative_to(ROOT)}: {target}"
        for path in readmes
        for target in LINK.findall(path.read_text(encoding="utf-8"))
        if "://" not in target and not target.startswith("mailto:")
        if not (path.parent / target).exists()
    ]
    assert len(readmes) >= 6
    assert broken == []
