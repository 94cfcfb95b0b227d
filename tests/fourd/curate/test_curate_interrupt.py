"""Ctrl-C stops `curate 4d render --workers 2` as a terminal sends it (SIGINT to the whole
process group): within seconds, no worker left rendering or started after it, the objects that
finished kept (a rerun skips them), and funnel.json saying how many were not done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TESTS, default_sigint
from vidbench.benchmarks.fourd.curate.manifest import Asset
from vidbench.benchmarks.fourd.curate.render import RenderJob, completed
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.synthetic.assets import export_assets
from vidbench.report.funnel import Funnel

pytest.importorskip("bpy")
pytestmark = pytest.mark.slow

OBJECTS = 8
SETTINGS = RenderSettings(views=4, size=32, max_frames=12, samples=1, threads=1)


def _job(out: Path, uid: str) -> RenderJob:
    """The render job of an object whose render.json is in OUT (it names the asset)."""
    asset = Asset(uid, Path(json.loads((out / uid / "render.json").read_text())["file"]))
    return RenderJob(asset, {}, SETTINGS.identity(), SETTINGS.views, 0)


ARGS = ["--views", "4", "--size", "32", "--max-frames", "12", "--samples", "1", "--threads", "1"]


def _workers_of(out: Path) -> list[int]:
    """Pids of the processes whose command line names a job file under `out`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        if str(out) in command and ".job.json" in command:
            found.append(int(entry.name))
    return found


def _started(out: Path) -> set[str]:
    return {p.parent.name for p in out.glob("*/.job.json")}


def _rendered(out: Path) -> set[str]:
    return {p.parent.name for p in out.glob("*/render.json")}


def test_ctrl_c_to_the_process_group_stops_the_render(tmp_path: Path) -> None:
    manifest = export_assets(tmp_path / "assets", OBJECTS, frames=12, progress=False)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])}
    command = [sys.executable, "-m", "vidbench.cli", "--no-progress", "curate", "4d", "render"]
    proc = subprocess.Popen(
        [*command, str(manifest), "--out", str(out), "--workers", "2", *ARGS],
        preexec_fn=default_sigint,
        start_new_session=True,  # its own process group, as a terminal gives a command
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _rendered(out) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None and _rendered(out), "the run ended before its interruption"
        started = _started(out)
        assert len(started) < OBJECTS
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        assert time.monotonic() - sent < 10, "Ctrl-C took too long to stop the render"
    finally:
        if proc.poll() is None:  # the test failed: stop what it started
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for pid in _workers_of(out):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130 and "interrupted" in stderr, stderr

    assert _workers_of(out) == []  # no worker left rendering
    assert _started(out) == started  # and none started after Ctrl-C
    time.sleep(1.0)
    assert _started(out) == started and _workers_of(out) == []

    rendered = {
        uid for uid in _rendered(out) if completed(out / uid, _job(out, uid)) is not None
    }  # finished objects kept: a rerun skips them
    assert rendered and len(rendered) < OBJECTS
    stage = Funnel.read(out).stages["render"]
    done = stage.kept + sum(stage.dropped.values())
    assert stage.entered == OBJECTS
    assert stage.kept == sum(
        json.loads((out / uid / "render.json").read_text())["status"] == "rendered"
        for uid in rendered
    )
    assert stage.pending == OBJECTS - done > 0  # the funnel says it is not complete
