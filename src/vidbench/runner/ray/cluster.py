"""Starting or joining the Ray cluster of a run, and what its workers ask of it.

`ray_cluster(None | "local")` starts a cluster on this machine (no dashboard) for the length of
the run, with a watchdog that ends its processes when this one ends, even by `kill -9`
(watchdog.py); `"auto"` joins the one `ray start` runs here; any other address joins that
cluster (whose GCS ends a dead driver's workers itself).
Workers get the driver's PYTHONPATH, so they import the same code (on other nodes: the same
paths, or vidbench installed alike).
"""

from __future__ import annotations

import os
import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from vidbench.extras import require
from vidbench.models.registry import ModelOptions
from vidbench.runner.ray import watchdog

GPU_BACKENDS = ("hf", "vllm")  # local models: one GPU per worker


def gpus_per_worker(model_spec: str, options: ModelOptions) -> float:
    """The GPUs one replica of a local model takes: one (a vLLM model split over N GPUs with
    tensor_parallel_size=N: N), none when it is told to run on the CPU."""
    prefix = model_spec.partition(":")[0]
    if prefix not in GPU_BACKENDS or options.extra.get("device", "auto") == "cpu":
        return 0.0
    return float(options.extra.get("tensor_parallel_size", "1")) if prefix == "vllm" else 1.0


def worker_env() -> dict[str, dict[str, str]] | None:
    """The driver's PYTHONPATH (made absolute) for its workers: they import the same code."""
    path = os.environ.get("PYTHONPATH")
    if not path:
        return None
    absolute = os.pathsep.join(os.path.abspath(p) for p in path.split(os.pathsep) if p)
    return {"env_vars": {"PYTHONPATH": absolute}}


TASK_EVENTS_ENV = "RAY_task_events_report_interval_ms"


@contextmanager
def ray_cluster(address: str | None, workers: int) -> Iterator[None]:
    """Join the cluster at `address` ("auto": the running one) or start one here (None,
    "local"); a Ray already initialised in this process (tests, notebooks) is used as it is."""
    require("vidbench run --ray", ["ray"], "ray")
    import ray

    if ray.is_initialized():
        yield
        return
    # Ray keeps an event of every task a driver sends (about 1 KB each, for its dashboard's task
    # list, which vidbench does not use): a run of 100,000 requests would hold 100 MB of them.
    # Off unless the variable is set.
    os.environ.setdefault(TASK_EVENTS_ENV, "0")
    if address not in (None, "local"):  # a cluster of its own: Ray ends a dead driver's workers
        with _own_sigterm():
            ray.init(address=address, log_to_driver=False, runtime_env=worker_env())
        try:
            yield
        finally:
            ray.shutdown()
        return
    mark = secrets.token_hex(8)
    guard = watchdog.start(mark)  # ends the cluster's processes with this one (watchdog.py)
    os.environ[watchdog.CLUSTER_ENV] = mark  # for the processes ray.init starts, and theirs
    try:
        with _own_sigterm():
            ray.init(
                address="local",  # a new instance, never one that `ray start` runs here
                num_cpus=max(os.cpu_count() or 2, workers + 1),
                include_dashboard=False,
                log_to_driver=False,
                runtime_env=worker_env(),
            )
        del os.environ[watchdog.CLUSTER_ENV]  # not for what this process starts later
        watchdog.tell_session(guard, _session_folder())
        yield
    finally:
        os.environ.pop(watchdog.CLUSTER_ENV, None)
        try:
            if ray.is_initialized():
                ray.shutdown()
        finally:
            watchdog.stop(guard)


@contextmanager
def _own_sigterm() -> Iterator[None]:
    """`ray.init` makes SIGTERM a plain `sys.exit`; the command's own handling (as Ctrl-C, with
    its exit status: cli.py) is put back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if handler is not None:  # None: not set from Python, nothing to put back
            signal.signal(signal.SIGTERM, handler)


def _session_folder() -> str:
    """The folder of the running cluster's session (its logs, sockets); Ray has no public call
    for it: "" when it cannot be had (the watchdog then goes by the mark alone)."""
    import ray

    try:
        return str(ray._private.worker._global_node.get_session_dir_path())
    except AttributeError:
        return ""
