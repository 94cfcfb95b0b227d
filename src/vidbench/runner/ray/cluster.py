"""Starting or joining the Ray cluster of a run, and what its workers ask of it.

`ray_cluster(None | "local")` starts a cluster on this machine (no dashboard) for the length of
the run; `"auto"` joins the one `ray start` runs here; any other address joins that cluster.
Workers get the driver's PYTHONPATH, so they import the same code (on other nodes: the same
paths, or vidbench installed alike).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from vidbench.extras import require
from vidbench.models.registry import ModelOptions

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


@contextmanager
def ray_cluster(address: str | None, workers: int) -> Iterator[None]:
    """Join the cluster at `address` ("auto": the running one) or start one here (None,
    "local"); a Ray already initialised in this process (tests, notebooks) is used as it is."""
    require("vidbench run --ray", ["ray"], "ray")
    import ray

    if ray.is_initialized():
        yield
        return
    if address in (None, "local"):
        ray.init(
            address="local",  # a new instance, never one that `ray start` runs here
            num_cpus=max(os.cpu_count() or 2, workers + 1),
            include_dashboard=False,
            log_to_driver=False,
            runtime_env=worker_env(),
        )
    else:
        ray.init(address=address, log_to_driver=False, runtime_env=worker_env())
    try:
        yield
    finally:
        ray.shutdown()
