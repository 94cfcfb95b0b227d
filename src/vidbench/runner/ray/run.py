"""`Run.infer` with `--ray`: a run's configuration turned into the Ray driver's settings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from vidbench.core.files import Json
from vidbench.models.api_model import ApiModel
from vidbench.models.base import Model, check_reachable
from vidbench.models.registry import ModelOptions
from vidbench.runner import spool
from vidbench.runner.ray.cluster import gpus_per_worker
from vidbench.runner.ray.driver import RaySettings, ray_infer
from vidbench.runner.ray.worker import WorkerSetup
from vidbench.runner.recorder import InferStats
from vidbench.runner.run_config import RunConfig
from vidbench.runner.samples import SampleSet
from vidbench.runner.store import Store
from vidbench.tasks.base import Task


@dataclass(frozen=True)
class RayInfer:
    """What `Run.infer` hands over: the run's configuration, task, model, plan and samples."""

    config: RunConfig
    task: Task
    model: Model
    identity: Mapping[str, Json]  # the model's identity in the driver (the plan's key)
    plan: str
    samples: SampleSet


def infer_run_on_ray(run: RayInfer, store: Store, run_id: int) -> InferStats:
    """`Run.infer` with `--ray`: the run's configuration -> worker setup and Ray settings."""
    config, model = run.config, run.model
    if not model.start_when_needed:  # an unreachable server or a bad key stops here, not later
        check_reachable(model)
    options = ModelOptions(config.seed, config.concurrency, config.model_options)
    spool_folder = spool.folder_of(store.path.parent)
    spool_folder.mkdir(exist_ok=True)
    setup = WorkerSetup(
        task=run.task,
        model_spec=config.model,
        model_options=options,
        plan=run.plan,
        cache_dir=os.path.abspath(config.cache_dir) if config.cache_dir else None,
        workdir=os.getcwd(),
        run_id=run_id,
        spool=str(spool_folder.resolve()),
    )
    is_api = isinstance(model, ApiModel)  # one bound over all workers
    settings = RaySettings(
        address=config.ray,
        workers=config.ray_workers,
        inflight=config.concurrency,
        chunk=model.batch_size,
        gpus_per_worker=gpus_per_worker(config.model, options),
        concurrency=config.concurrency if is_api else None,
        requests_per_s=config.ray_rate if is_api else None,
    )
    return ray_infer(
        run.task, setup, run.samples, store, run_id, settings, run.identity, config.progress
    )
