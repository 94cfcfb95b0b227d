"""Fresh virtual environments holding exactly `vidbench[EXTRAS]`: what a reader has who installed
the extras a page names, and nothing else, so that a page needing an extra it never names fails.

`FreshEnvs(root, wheel).bin(extras)` makes one environment per distinct set of extras (once per
test session, then shared by every page with that set):

- a new `python -m venv` (no system packages, no pip of its own);
- vidbench from the wheel built from this checkout, installed by pip (`--no-deps --no-index`);
- its dependencies: the requirements of `vidbench[EXTRAS]` read from that wheel's metadata,
  followed through every dependency's own requirements (markers and extras evaluated, as pip
  evaluates them), each found among this test environment's installed distributions and linked
  into the new environment's site-packages, file tree by file tree (a directory shared with a
  distribution left out, such as a namespace package, is linked entry by entry inside it).

Why links and not `pip install 'vidbench[EXTRAS]'` from the package index: the tests run offline
(the index this machine's pip uses lacks some of the releases installed here), and a real install
of the heavier extras costs minutes each on two cores (Blender's 356 MB wheel, llama.cpp compiled
from source), several times per session. Linking the exact dependency closure gives the same
import-time view in about a second: a module of an extra the page does not name is not there.
A requirement of vidbench itself that is not installed here stops the session with its name; a
dependency's own requirement that is not installed here (./dev installs bpy without its pins) is
left out, as it is absent from this environment too.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from email.parser import Parser
from pathlib import Path, PurePosixPath

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
# `pip install 'vidbench[a,b]'` or `pip install -e '.[a,b]'`, quoted or not, as a page writes it
# (a line may break inside, as Markdown wraps inline code)
INSTALL = re.compile(r"pip\s+install\s+(?:-e\s+)?['\"]?(?:vidbench|\.)\[([\w,-]+)\]")


def page_extras(text: str) -> frozenset[str]:
    """Every extra a page tells its reader to install (its `pip install` lines)."""
    return frozenset(e.strip() for m in INSTALL.finditer(text) for e in m.group(1).split(","))


def demo_extras(dev_script: Path = ROOT / "dev") -> frozenset[str]:
    """The extras `./dev demo` installs (its `setup EXTRAS` line): what getting started gives."""
    found = re.search(r"^\s*demo\)\s*\n\s*setup (\S+)", dev_script.read_text(), re.M)
    if found is None:
        raise RuntimeError(f"{dev_script}: no `setup EXTRAS` line under `demo)`")
    return frozenset(found.group(1).split(","))


def _wheel_requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def _wanted(requirement: Requirement, extras: Iterable[str]) -> bool:
    if requirement.marker is None:
        return True
    environment = dict(default_environment())
    return any(requirement.marker.evaluate({**environment, "extra": e}) for e in (*extras, ""))


class Installed:
    """This test environment's distributions (its site-packages), by canonical name, and which
    of them own each path under site-packages (purelib and platlib alike)."""

    def __init__(self) -> None:
        paths = sysconfig.get_paths()
        self.sites = list(dict.fromkeys(Path(paths[k]) for k in ("purelib", "platlib")))
        self.dists: dict[str, metadata.Distribution] = {}
        self.base: dict[str, Path] = {}  # the site-packages folder each distribution is in
        self.owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for site in self.sites:
            for dist in metadata.distributions(path=[str(site)]):
                name = canonicalize_name(dist.metadata["Name"])
                if name in self.dists:
                    continue
                self.dists[name], self.base[name] = dist, site
                for file in dist.files or []:
                    parts = PurePosixPath(file).parts
                    if parts and parts[0] != "..":  # scripts and data outside site-packages
                        for k in range(1, len(parts) + 1):
                            self.owners[parts[:k]].add(name)

    def closure(self, requirements: list[str], extras: frozenset[str]) -> set[str]:
        """The distributions `requirements` (vidbench's own, with `extras`) need, transitively."""
        names: set[str] = set()
        seen: set[tuple[str, frozenset[str]]] = set()  # (distribution, extras) followed
        queue = [(Requirement(r), extras, True) for r in requirements]
        while queue:
            requirement, asked, own = queue.pop()
            if not _wanted(requirement, asked):
                continue
            name = canonicalize_name(requirement.name)
            if name == "vidbench":  # an extra naming others (dev = vidbench[api,hf,...])
                more = frozenset(requirement.extras)
                queue += [(Requirement(r), more, True) for r in requirements]
                continue
            dist = self.dists.get(name)
            if dist is None:
                if own:
                    raise RuntimeError(f"vidbench needs {requirement}, not installed here")
                continue  # a dependency's pin ./dev deliberately leaves out (see the doc)
            key = (name, frozenset(requirement.extras))
            if key in seen:
                continue
            seen.add(key)
            names.add(name)
            queue += [(Requirement(r), key[1], False) for r in dist.requires or []]
        return names

    def link(self, names: set[str], site: Path) -> None:
        """Link the files of the distributions `names` into `site`: each path at the shortest
        prefix that no other distribution shares."""
        done: set[tuple[str, ...]] = set()
        for name in sorted(names):
            for file in self.dists[name].files or []:
                parts = PurePosixPath(file).parts
                if not parts or parts[0] == "..":
                    continue
                prefix = next(
                    (parts[:k] for k in range(1, len(parts)) if self.owners[parts[:k]] <= names),
                    parts,
                )
                if prefix in done or any(prefix[:k] in done for k in range(1, len(prefix))):
                    continue
                done.add(prefix)
                target = site.joinpath(*prefix)
                source = self.base[name].joinpath(*prefix)
                if source.exists() and not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.symlink_to(source)


class FreshEnvs:
    """One fresh environment per set of extras, made on first use (see the module doc)."""

    def __init__(self, root: Path, wheel: Path) -> None:
        self.root = root
        self.wheel = wheel
        self.made: dict[frozenset[str], Path] = {}
        self._installed: Installed | None = None

    def bin(self, extras: frozenset[str]) -> Path:
        """The `bin` folder of the environment with exactly `vidbench[extras]`."""
        if extras not in self.made:
            self.made[extras] = self._make(extras)
        return self.made[extras]

    def _make(self, extras: frozenset[str]) -> Path:
        if self._installed is None:
            self._installed = Installed()
        venv = self.root / ("vidbench-" + ("-".join(sorted(extras)) or "base"))
        # without PYTHONPATH: the sources under test (and their egg-info) are not the install
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, env=env)
        python = venv / "bin" / "python"
        site = Path(
            subprocess.run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout.strip()
        )
        needed = self._installed.closure(_wheel_requirements(self.wheel), extras)
        # and setuptools: what pip's build isolation would bring a page that installs a package
        self._installed.link(needed | {"setuptools"}, site)
        install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
        subprocess.run([*install, "--no-deps", "--no-index", self.wheel], check=True, env=env)
        # `pip` for a page that installs a package (docs/examples): this environment's pip
        # working on the fresh one, which has none of its own
        pip = venv / "bin" / "pip"
        offline = "PIP_NO_INDEX=1 PIP_NO_BUILD_ISOLATION=0"  # pip reads "0" as: no isolation
        command = f'{offline} exec {sys.executable} -m pip --python {python} "$@"'
        pip.write_text(f"#!/bin/sh\n{command}\n")
        pip.chmod(0o755)
        return venv / "bin"
