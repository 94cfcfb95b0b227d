"""Helpers for the Ray tests: a local cluster, runs against the fake chat server, comparisons."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import TESTS
from support_models import Timed
from vidbench.core.errors import ConfigError
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.testing import ChatServer, request_text

SRC = TESTS.parent / "src"
# Every process this test session starts carries this mark in its environment (the clusters'
# processes too: they inherit it), so the tests count their own processes only, never those of
# another Ray on the machine.
SESSION_ENV = "VIDBENCH_TEST_RAY_SESSION"
os.environ.setdefault(SESSION_ENV, secrets.token_hex(8))
CLUSTER_MARK = f"{SESSION_ENV}={os.environ[SESSION_ENV]}"  # name=value, as in an environment
WORKER_ENV = {
    "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS / "scaleout"), str(TESTS)]),
    **dict([CLUSTER_MARK.split("=")]),
}
POISON_ENV = "VIDBENCH_TEST_POISON"
WHERE_ENV = "VIDBENCH_TEST_WHERE"  # set to "cuda" in the workers
# what differs between two runs of the same thing (when, where, how long)
VOLATILE = {"created", "latency_s", "wall_s"}
WHERE = {"out", "cache_dir"}  # run.json: where the two runs wrote


def scripted_reply(body: dict[str, Any]) -> str:
    """An answer that depends on the question, so a mix-up between samples shows."""
    return f"The answer is ({'ABCD'[zlib.crc32(request_text(body).encode()) % 4]})"


def spec_of(server: ChatServer) -> str:
    return f"openai-compat:{server.base_url}#fake-model"


def config(release: Path, out: Path, cache: Path, model: str, **fields: Any) -> RunConfig:
    return RunConfig(
        task="4dbench-qa",
        data=str(release),
        model=model,
        out=str(out),
        cache_dir=str(cache),
        progress=False,
        model_options={"backoff": "0.01", "timeout": "10"} if model.startswith("openai") else {},
        **fields,
    )


def run(cfg: RunConfig) -> dict[str, Any]:
    Run(cfg).run()
    return json.loads((Path(cfg.out) / "results.json").read_text())


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def result_files(out: Path) -> dict[str, Any]:
    """results.json, samples.jsonl, the tables and run.json, less when and where they ran."""
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {
        "results": _strip(json.loads((out / "results.json").read_text())),
        "samples": _strip(samples),
        "run": {
            k: v for k, v in json.loads((out / "run.json").read_text()).items() if k not in WHERE
        },
        "table.md": (out / "table.md").read_text(),
        "table.csv": (out / "table.csv").read_text(),
    }


def marked(value: str, name: str = SESSION_ENV) -> list[int]:
    """The processes whose environment holds name=value."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and wanted in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # ended meanwhile, or not ours
            continue
    return found


def worker_pids() -> list[int]:
    """This session's live InferWorker actors (Ray titles them ray::InferWorker...)."""
    pids = []
    for pid in marked(os.environ[SESSION_ENV]):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"ray::InferWorker"):
            pids.append(pid)
    return pids


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


class Poison(Model):
    """Answers "(A)" at once, but the process asked about the sample whose id is in
    $VIDBENCH_TEST_POISON exits on the spot (a request that crashes its model)."""

    spec = "python:ray_support:Poison"
    needs_frames = False

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        if any(r.sample_id == os.environ.get(POISON_ENV) for r in requests):
            os._exit(1)
        return [Response(r.key, "(A)") for r in requests]


class NoWeights(Model):
    """A local model whose weights cannot be loaded: its costly start fails in the worker."""

    spec = "python:ray_support:NoWeights"
    start_when_needed = True
    needs_frames = False

    async def start(self) -> None:
        raise ConfigError("no weights at /models/missing")

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        raise AssertionError("never asked: start failed")


class WhereAmI(Model):
    """A model whose identity depends on where it runs ($VIDBENCH_TEST_WHERE), as an `hf:` model
    with device=auto does (a GPU in a worker, the CPU on a head node)."""

    spec = "python:ray_support:WhereAmI"
    needs_frames = False

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "device_type": os.environ.get(WHERE_ENV, "cpu")}

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(r.key, "(A)") for r in requests]


class OtherWeights(WhereAmI):
    """A model whose checkpoint files differ in the workers (another copy of an `hf:` folder)."""

    spec = "python:ray_support:OtherWeights"

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "weights": os.environ.get(WHERE_ENV, "cpu") + "-copy"}


class NotThere(WhereAmI):
    """A model that builds here but not in the workers (e.g. a module they cannot import)."""

    spec = "python:ray_support:NotThere"

    def __init__(self) -> None:
        if os.environ.get(WHERE_ENV) == "cuda":
            raise ImportError("No module named 'my_private_model'")


MARKS_ENV = "VIDBENCH_TEST_MARKS"  # a folder the workers share with the test


class DiesAtTiming(Timed):
    """Timed, 0.1 s a call; the first worker asked for its timing at the end of the run exits
    on the spot (a worker that dies idle after its last answer). Outside the workers
    ($VIDBENCH_TEST_MARKS unset) it is Timed."""

    spec = "python:ray_support:DiesAtTiming"

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        await asyncio.sleep(0.1)
        return await super().generate(requests)

    def timing(self) -> dict[str, float | int]:
        marks = os.environ.get(MARKS_ENV)
        if marks is not None:
            try:
                os.close(os.open(Path(marks) / "died-at-timing", os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return super().timing()
            os._exit(1)
        return super().timing()


class SlowStart(Poison):
    """Answers "(A)" at once; in a worker its constructor takes 2 s (loading weights, say)."""

    spec = "python:ray_support:SlowStart"

    def __init__(self) -> None:
        if os.environ.get(MARKS_ENV) is not None:
            time.sleep(2.0)
