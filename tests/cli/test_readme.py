"""The README's offline examples run as written.

A fenced ```bash block right after the line `<!-- readme-test: offline -->` needs no key, GPU or
downloaded data: this test runs every such block, in README order, in one working folder that
holds what they name (`demo/data`, a demo dataset; `clip.mp4` and `long.mp4`, two videos), with
the `vidbench` of this environment first on PATH. Blocks that need keys, GPUs or a real release
under /data stay unmarked. Benchmark READMEs (src/vidbench/benchmarks/*/README.md) are read too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.media.encode import write_mp4

ROOT = Path(__file__).resolve().parents[2]
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
    work = tmp_path_factory.mktemp("readme")
    generate(work / "demo" / "data", objects=8, frames=12, size=32, workers=1)
    write_mp4(work / "clip.mp4", [np.full((48, 64, 3), 4 * i, np.uint8) for i in range(60)])
    ramp = [np.full((48, 64, 3), i % 256, np.uint8) for i in range(25 * 8)]
    write_mp4(work / "long.mp4", ramp, fps=8)  # 25 s
    return work


def test_the_readme_marks_offline_blocks() -> None:
    names = [name for name, _ in offline_blocks()]
    assert len(names) >= 6, names


@pytest.mark.slow
@pytest.mark.parametrize(("name", "block"), offline_blocks(), ids=lambda v: v.split("\n")[0])
def test_offline_block_runs_as_written(name: str, block: str, workdir: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["VIDBENCH_CACHE"] = str(workdir / "cache")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (
        f"{name} failed:\n{block}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    )
