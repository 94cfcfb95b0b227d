"""Every shell example in docs/ runs as written.

Each page's ```bash blocks run in page order in one bash process, in a fresh folder holding what
the examples name (tests/examples_support.py: a small demo dataset as `demo/data`, `clip.mp4`,
`long.mp4`, the AutoEval-Video data as `autoeval-video/`); servers a page starts in the
background are ended after it. A block that cannot run here (a key, a GPU, a download) carries
the line `<!-- docs-test: skip REASON -->` right before it and is reported as a skipped test with
that reason.

A tutorial or a how-to runs as its reader would run it: in a fresh environment holding vidbench
with exactly the extras the page tells the reader to install (its `pip install 'vidbench[...]'`
lines) and those `./dev demo` installs, nothing else (tests/fresh_envs.py; one environment per
set of extras, shared by the pages that need the same), so a page that needs an extra it never
names fails here. The other pages run with this environment's `vidbench` (every extra).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples_support import ROOT, example_folder, make_inputs, run_blocks
from fresh_envs import FreshEnvs, demo_extras, page_extras

DOCS = ROOT / "docs"
FRESH = ("tutorials/", "how-to/")  # pages run in a fresh environment with the extras they name
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


@pytest.fixture(scope="module")
def fresh(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshEnvs:
    [wheel] = dist.glob("*.whl")
    return FreshEnvs(tmp_path_factory.mktemp("fresh-envs"), wheel)


def extras_of(page: str) -> frozenset[str] | None:
    """The extras a tutorial or how-to runs with (None: another page, this environment)."""
    if not page.startswith(FRESH):
        return None
    return demo_extras() | page_extras((DOCS / page).read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("page", pages())
def test_page_examples_run_as_written(
    page: str, inputs: Path, tmp_path: Path, fresh: FreshEnvs
) -> None:
    blocks = [(b.name, b.text) for b in shell_blocks() if b.page == page and b.skip is None]
    extras = extras_of(page)
    bin_dir = None if extras is None else fresh.bin(extras)
    code, output = run_blocks(blocks, example_folder(inputs, tmp_path / "work"), bin_dir=bin_dir)
    where = "this environment" if extras is None else f"vidbench[{','.join(sorted(extras))}]"
    assert code == 0, f"{page} failed in {where} (the last '=== ' names the block):\n{output}"


def test_the_extras_a_page_names_are_read_from_its_install_lines() -> None:
    text = (
        "You need `pip install 'vidbench[asr,testing]'`; in a checkout `pip install -e\n"
        "'.[render]'`. The `hf` extra is optional.\n```bash\npip install vidbench[view]\n```"
    )
    assert page_extras(text) == {"asr", "testing", "render", "view"}
    assert demo_extras() == {"plots"}  # ./dev demo: setup plots
    assert extras_of("tutorials/api-model-4dbench.md") == {"plots", "testing"}
    assert extras_of("review-app.md") is None


@pytest.mark.slow
def test_a_page_that_does_not_name_the_extra_it_needs_fails(
    fresh: FreshEnvs, tmp_path: Path
) -> None:
    """The fake chat server without the `testing` extra: a one-line error naming the extra (no
    traceback), and the page's wait for it gives up, saying what it waited for."""
    page = [
        (
            "page block 1",
            "python -m vidbench.testing.chat_server --port 8190 &\n"
            "curl -sf --retry 3 --retry-delay 1 --retry-connrefused -o /dev/null "
            "http://127.0.0.1:8190/v1/models \\\n"
            '  || { echo "the fake chat server did not answer on port 8190 within 3 s" >&2;'
            " false; }",
        )
    ]
    (tmp_path / "a").mkdir()
    code, output = run_blocks(page, tmp_path / "a", bin_dir=fresh.bin(demo_extras()))
    assert code != 0
    assert "the fake chat server needs fastapi and uvicorn: pip install 'vidbench[testing]'" in (
        output
    )
    assert "Traceback" not in output
    assert "did not answer on port 8190 within 3 s" in output
    (tmp_path / "b").mkdir()
    named = demo_extras() | {"testing"}
    code, output = run_blocks(page, tmp_path / "b", bin_dir=fresh.bin(named))
    assert code == 0, output


@pytest.mark.parametrize(
    "block", [b for b in shell_blocks() if b.skip is not None], ids=lambda b: b.name
)
def test_marked_block(block: Block) -> None:
    pytest.skip(f"{block.name}: {block.skip}")
