"""Running the shell examples of the README, the benchmark READMEs and docs/ as written.

`example_folder` fills a working folder with what the examples name: `demo/data` (a small demo
dataset), `clip.mp4` and `long.mp4` (two videos), `autoeval-video/` (the AutoEval-Video data
under tests/data) and a copy of each example package of docs/examples (`toy-benchmark/`,
`pick-backend/`). `run_blocks` runs blocks in order in one bash process there, with this
environment's `vidbench` first on PATH (or a fresh environment's: fresh_envs.py; or, for blocks
that install a package, a virtual environment of their own over this one), and then ends
whatever the blocks left running in the background (a fake server started with `&`).
`install_example` installs an example package as pip does, for the tests that use it;
`build_dist` makes the sdist and the wheel a user installs."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.media.encode import write_mp4

TESTS = Path(__file__).parent
ROOT = TESTS.parent
AUTOEVAL = TESTS / "data" / "autoeval-video"
EXAMPLES = ROOT / "docs" / "examples"


def install_example(name: str, site: Path) -> Path:
    """Install the example package docs/examples/NAME (its pyproject.toml, entry points
    included) into the folder `site`, as `pip install` would into site-packages, offline and
    leaving the source tree as it is; returns `site`, to put on PYTHONPATH."""
    source = site.parent / f"{name}-source"
    shutil.copytree(EXAMPLES / name, source)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    pip += ["--no-build-isolation", "--target", str(site), str(source)]
    installed = subprocess.run(pip, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, f"pip install of {name} failed:\n{installed.stderr}"
    return site


def make_inputs(folder: Path) -> Path:
    """The inputs the examples name, written once (copy them with `example_folder`)."""
    generate(folder / "demo" / "data", objects=8, frames=12, size=32, workers=1)
    write_mp4(folder / "clip.mp4", [np.full((48, 64, 3), 4 * i, np.uint8) for i in range(60)])
    ramp = [np.full((48, 64, 3), i % 256, np.uint8) for i in range(25 * 8)]
    write_mp4(folder / "long.mp4", ramp, fps=8)  # 25 s
    return folder


def example_folder(inputs: Path, folder: Path) -> Path:
    """A fresh working folder holding a copy of `inputs`, a link to the AutoEval-Video data and
    a copy of each example package."""
    shutil.copytree(inputs, folder)
    (folder / "autoeval-video").symlink_to(AUTOEVAL, target_is_directory=True)
    for package in (p for p in EXAMPLES.iterdir() if (p / "pyproject.toml").is_file()):
        shutil.copytree(package, folder / package.name)
    return folder


def build_dist(out: Path) -> Path:
    """`python -m build` of a copy of the sources (building writes beside them): the sdist and
    the wheel in `out`."""
    source = out.parent / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), "."]
    done = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"python -m build:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return out


def own_environment(folder: Path) -> dict[str, str]:
    """A virtual environment at FOLDER over this one, for blocks that `pip install` a package:
    it sees every package installed here (its .pth file adds this environment's site-packages,
    their .pth files included), and what the blocks install goes into it, never into this
    environment. Its `vidbench` and `pip` run its python; pip installs offline, building with
    the setuptools installed here. Returns the environment variables that select it."""
    venv.EnvBuilder(symlinks=True).create(folder)  # without pip: this environment's pip runs
    [site] = folder.glob("lib/python*/site-packages")
    here = sysconfig.get_paths()["purelib"]
    (site / "_this_environment.pth").write_text(f"import site; site.addsitedir({here!r})\n")
    scripts = folder / "bin"
    for name, module in (("vidbench", "vidbench.cli"), ("pip", "pip._internal.cli.main")):
        script = scripts / name
        python = scripts / "python"
        script.write_text(f"#!{python}\nimport sys\nfrom {module} import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return {
        "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(folder),
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads "0" as: no build isolation
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def run_blocks(
    named_blocks: Sequence[tuple[str, str]],
    cwd: Path,
    timeout: float = 600,
    bin_dir: Path | None = None,
) -> tuple[int, str]:
    """Run the blocks in order in one `bash -euo pipefail`; (exit status, the output's tail).
    `bin_dir`: a fresh environment's `bin` (fresh_envs.py) first on PATH instead of this
    environment's, without this environment's PYTHONPATH.

    Each block is announced on the output (`=== NAME`), so a failure names its block. The
    output goes to a file, not a pipe: a server a block leaves in the background keeps its
    copy of a pipe open, and reading it would wait for that server. Blocks that `pip install`
    run in an environment of their own (`own_environment`)."""
    script = "".join(f"echo '=== {name}'\n{block}\n" for name, block in named_blocks)
    first = bin_dir or Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{first}{os.pathsep}{os.environ['PATH']}"}
    if bin_dir is not None:  # the fresh environment's vidbench, not the sources under test
        env.pop("PYTHONPATH", None)
        env["VIRTUAL_ENV"] = str(bin_dir.parent)
    elif any("pip install" in block for _, block in named_blocks):
        env |= own_environment(cwd / ".venv")
    env["VIDBENCH_CACHE"] = str(cwd / ".cache")
    log = cwd / ".examples.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: background jobs end with it below
        )
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = -1
        finally:
            with contextlib.suppress(ProcessLookupError):  # everything already ended
                os.killpg(process.pid, signal.SIGTERM)
            process.wait()
    return code, log.read_text(errors="replace")[-6000:]
