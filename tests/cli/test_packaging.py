"""What a user installs: `python -m build` makes an sdist and a wheel, and the wheel, installed
into a fresh virtual environment, runs `vidbench demo` with its own static files, templates and
prompt files.

The fresh environment gets vidbench from the wheel alone (`pip install --no-deps`); its
dependencies come from this test environment's site-packages through a `.pth` line, because the
tests run offline and pip could not download them. A path added by a `.pth` line comes after the
new environment's own site-packages and its `.pth` files are not run, so this environment's
editable vidbench stays out of sight (the test checks which vidbench was imported)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import vidbench
from examples_support import ROOT

PACKAGE_FILES = ROOT / "src" / "vidbench"


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.slow
def test_build_gives_an_sdist_and_a_wheel_with_every_data_file(dist: Path) -> None:
    version = vidbench.__version__
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    assert wheel.name == f"vidbench-{version}-py3-none-any.whl"
    assert sdist.name == f"vidbench-{version}.tar.gz"
    data_files = {
        str(p.relative_to(PACKAGE_FILES.parent))
        for p in PACKAGE_FILES.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and p.name != "README.md"
    }
    assert len(data_files) > 30  # templates, static files, prompt files
    names = set(zipfile.ZipFile(wheel).namelist())
    assert data_files - names == set()
    assert "vidbench/py.typed" in names  # plugins' type checkers read vidbench's types
    metadata = zipfile.ZipFile(wheel).read(f"vidbench-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata


@pytest.mark.slow
def test_the_wheel_runs_the_demo_in_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    [wheel] = dist.glob("*.whl")
    _run(python, "-m", "pip", "install", "--no-deps", "--no-index", wheel, cwd=tmp_path)
    site = _run(
        python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path
    )
    Path(site.strip(), "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the wheel, not src/
    where = _run(python, "-c", "import vidbench; print(vidbench.__file__)", cwd=tmp_path, env=env)
    assert where.startswith(str(venv)), where
    assert _run(venv / "bin/vidbench", "--version", cwd=tmp_path, env=env).strip() == (
        f"vidbench {vidbench.__version__}"
    )
    out = _run(
        venv / "bin/vidbench", "demo", "--out", "demo", "--objects", "4", cwd=tmp_path, env=env
    )
    assert "random" in out and "constant:A" in out
    assert (tmp_path / "demo/results/table.md").read_text().count("\n") >= 4
    report = (tmp_path / "demo/report/index.html").read_text()  # view/static/ from the wheel
    assert "<script" in report
    prompts = _run(
        venv / "bin/vidbench", "curate", "4d", "qa", "--show-prompts", cwd=tmp_path, env=env
    )
    assert "You are writing multiple-choice questions for 4D-Bench" in prompts  # prompt files
