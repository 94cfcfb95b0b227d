"""A declared benchmark on a local Ray cluster gives the results of a local run: its task and
samples travel to the workers like any benchmark's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_support import make_bench, vidbench

pytest.importorskip("ray")
pytestmark = pytest.mark.slow


def _scored(out: Path) -> list[dict]:
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k != "latency_s"} for r in rows), key=str)


def test_on_ray_as_here(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench")
    here, on_ray = tmp_path / "here", tmp_path / "ray"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", here) == 0
    args = ["--model", "random", "--out", on_ray, "--ray", "local", "--ray-workers", "2"]
    assert vidbench("run", f"custom:{bench}", *args) == 0
    a, b = (json.loads((d / "results.json").read_text()) for d in (here, on_ray))
    assert b["n"] == 6 and b["errors"] == 0 and a["columns"] == b["columns"]
    assert _scored(here) == _scored(on_ray)
