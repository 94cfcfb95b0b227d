"""Every shell example in docs/ runs as written.

Each page's ```bash blocks run in page order in one bash process, in a fresh folder holding what
the examples name (tests/examples_support.py: a small demo dataset as `demo/data`, `clip.mp4`,
`long.mp4`, the AutoEval-Video data as `autoeval-video/`), with this environment's `vidbench`
first on PATH; servers a page starts in the background are ended after it. A block that cannot
run here (a key, a GPU, a download) carries the line `<!-- docs-test: skip REASON -->` right
before it and is reported as a skipped test with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples_support import ROOT, example_folder, make_inputs, run_blocks

DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!-- docs-test: skip ([^\n]*?) -->\s*\Z")
SHELL = {"bash", "sh", "shell", "console", "zsh"}


@dataclass(frozen=True)
class Block:
    page: str
    number: int
    language: str
    text: str
    skip: str | None  # the reason, for a block marked to be skipped

    @property
    def name(self) -> str:
        return f"{self.page} block {self.number}"


def shell_blocks() -> list[Block]:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        blocks = [m for m in FENCE.finditer(text) if m.group(1) in SHELL]
        for number, match in enumerate(blocks, 1):
            marked = SKIP.search(text[: match.start()].rstrip() + "\n")
            page = str(path.relative_to(DOCS))
            found.append(Block(page, number, match.group(1), match.group(2), _reason(marked)))
    return found


def _reason(marked: re.Match[str] | None) -> str | None:
    return marked.group(1).strip() if marked else None


def pages() -> list[str]:
    return sorted({b.page for b in shell_blocks() if b.skip is None})


def test_docs_have_shell_examples_and_few_are_skipped() -> None:
    blocks = shell_blocks()
    skipped = [b for b in blocks if b.skip is not None]
    assert len(blocks) >= 40, len(blocks)
    assert all(b.skip for b in skipped), "a skip mark needs its reason"
    assert len(skipped) <= len(blocks) // 4, [b.name for b in skipped]


def test_shell_examples_are_bash_blocks() -> None:
    """One language for shell examples (```bash), so none escapes this test as another fence."""
    assert [b.name for b in shell_blocks() if b.language != "bash"] == []


def test_a_skip_mark_belongs_to_the_next_block() -> None:
    marks = sum(p.read_text().count("<!-- docs-test: skip") for p in DOCS.rglob("*.md"))
    assert marks == sum(1 for b in shell_blocks() if b.skip is not None)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_inputs(tmp_path_factory.mktemp("docs-inputs") / "inputs")


@pytest.mark.slow
@pytest.mark.parametrize("page", pages())
def test_page_examples_run_as_written(page: str, inputs: Path, tmp_path: Path) -> None:
    blocks = [(b.name, b.text) for b in shell_blocks() if b.page == page and b.skip is None]
    code, output = run_blocks(blocks, example_folder(inputs, tmp_path / "work"))
    assert code == 0, f"{page} failed (the last '=== ' line names the block):\n{output}"


@pytest.mark.parametrize(
    "block", [b for b in shell_blocks() if b.skip is not None], ids=lambda b: b.name
)
def test_marked_block(block: Block) -> None:
    pytest.skip(f"{block.name}: {block.skip}")
