"""`vidbench run --ray`: a local Ray cluster (2 workers) gives the results of a local run, and
survives killed workers, a request that kills workers and a killed driver."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ray_support import (
    POISON_ENV,
    WHERE_ENV,
    WORKER_ENV,
    NotThere,
    NoWeights,
    OtherWeights,
    Poison,
    Timed,
    WhereAmI,
    config,
    kill,
    marked,
    result_files,
    run,
    scripted_reply,
    spec_of,
    worker_pids,
)

from conftest import make_qa_dataset
from vidbench.core.errors import ConfigError
from vidbench.models.registry import ModelOptions
from vidbench.runner.ray.cluster import gpus_per_worker
from vidbench.testing import ChatServer

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow
POISON_SAMPLE = f"{0:032x}_motion"  # object 0's Action question
RUN_ENV = "VIDBENCH_TEST_RUN"  # one run's mark, to tell its own cluster's processes apart


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A Ray cluster on 127.0.0.1 for the module; yields its address for other drivers."""
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {**WORKER_ENV, POISON_ENV: POISON_SAMPLE, WHERE_ENV: "cuda"}},
    )
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_qa_dataset(tmp_path_factory.mktemp("ray_release"), n_objects=8)  # 40 questions


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with ChatServer(reply=scripted_reply) as s:
        yield s


def _answered(out: Path) -> set[str]:
    with sqlite3.connect(out / "store.sqlite") as db:
        return {row[0] for row in db.execute("SELECT sample_id FROM responses")}


def test_same_results_as_a_local_run(
    cluster: str, release: Path, server: ChatServer, tmp_path: Path
) -> None:
    server.reset(latency=0.02, reply=scripted_reply)
    spec = spec_of(server)
    local = tmp_path / "local"
    run(config(release, local, tmp_path / "cache-local", spec, concurrency=4))
    asked_locally = server.stats().received
    server.reset(latency=0.02, reply=scripted_reply)
    on_ray = tmp_path / "ray"
    results = run(config(release, on_ray, tmp_path / "cache-ray", spec, concurrency=4, ray="auto"))
    assert results["n"] == 40 and results["errors"] == 0
    assert server.stats().received == asked_locally == 40
    assert server.stats().max_in_flight <= 4  # --concurrency 4 bounds both workers together
    assert result_files(on_ray) == result_files(local)
    # a rerun on Ray asks nothing: every answer is in the store
    server.reset(reply=scripted_reply)
    run(config(release, on_ray, tmp_path / "cache-ray", spec, concurrency=4, ray="auto"))
    assert server.stats().received == 0


def test_a_killed_worker_is_replaced_and_nothing_answered_is_asked_again(
    cluster: str, release: Path, server: ChatServer, tmp_path: Path
) -> None:
    server.reset(latency=0.2, reply=scripted_reply)
    at_kill: dict[str, int] = {}
    bound = 4  # calls in flight over the whole cluster (the shared limiter): at most this many
    # were in flight at the kill. (Counting them at the server undercounts: a request still in
    # transit when the counters are read arrives later.)

    def killer() -> None:
        deadline = time.monotonic() + 60
        while server.stats().served < 8 and time.monotonic() < deadline:
            time.sleep(0.01)
        pids = worker_pids()
        at_kill["stored"] = len(_answered(out))
        kill(pids[0])
        at_kill["pids"] = len(pids)

    out = tmp_path / "out"
    thread = threading.Thread(target=killer)
    thread.start()
    results = run(
        config(release, out, tmp_path / "cache", spec_of(server), concurrency=bound, ray="auto")
    )
    thread.join()
    stats = server.stats()
    assert at_kill["pids"] == 2 and 0 < at_kill["stored"] < 40  # killed mid-run
    # the dead worker's calls stay open at the server a while; its limiter slots are freed
    assert stats.max_in_flight <= 2 * bound
    assert results["n"] == 40 and results["errors"] == 0 and len(_answered(out)) == 40
    # only requests in flight at the kill can have been asked twice
    assert stats.resent_after_answer <= bound
    assert stats.received <= 40 + bound


def test_a_request_that_kills_its_workers_fails_alone(
    cluster: str, release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    results = run(config(release, out, tmp_path / "cache", Poison.spec, concurrency=2, ray="auto"))
    assert results["n"] == 40 and results["errors"] == 1
    assert _answered(out) == {line for line in _sample_ids(out) if line != POISON_SAMPLE}
    with sqlite3.connect(out / "store.sqlite") as db:
        failures = db.execute("SELECT sample_id, error FROM failures").fetchall()
    assert [sample for sample, _ in failures] == [POISON_SAMPLE]
    # in flight at a death, then in a group of suspects at a second (or alone at once): isolated
    assert re.search(r"in flight when [23] Ray workers died, the last time alone", failures[0][1])


def _sample_ids(out: Path) -> list[str]:
    import json

    return [json.loads(line)["id"] for line in (out / "samples.jsonl").read_text().splitlines()]


def _run_command(
    release: Path, server: ChatServer, tmp_path: Path, concurrency: int, *ray: str
) -> list[str]:
    """`vidbench run` of the release against the fake server, into tmp_path/out, as a command."""
    return [
        sys.executable, "-m", "vidbench.cli", "--no-progress", "run", "4dbench-qa",
        "--data", str(release), "--model", spec_of(server), "--out", str(tmp_path / "out"),
        "--cache-dir", str(tmp_path / "cache"), "--concurrency", str(concurrency),
        "--model-opt", "backoff=0.01", *ray,
    ]  # fmt: skip


def test_a_driver_killed_with_kill_9_resumes_from_the_store(
    cluster: str, release: Path, server: ChatServer, tmp_path: Path
) -> None:
    server.reset(latency=0.2, reply=scripted_reply)
    out = tmp_path / "out"
    command = _run_command(release, server, tmp_path, 2, "--ray", cluster)
    env = {**os.environ, **WORKER_ENV}
    driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while server.stats().served < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    while server.stats().in_flight and time.monotonic() < deadline:  # orphans finish
        time.sleep(0.05)
    time.sleep(0.5)
    answered_before = _answered(out) | _spooled(out)
    asked_before = server.stats().received
    assert 0 < len(answered_before) < 40
    results = run(
        config(release, out, tmp_path / "cache", spec_of(server), concurrency=2, ray="auto")
    )
    assert results["n"] == 40 and results["errors"] == 0
    # the resumed run asks exactly the questions without an answer, stored or spooled, each once
    assert server.stats().received - asked_before == 40 - len(answered_before)
    assert not (out / ".ray-answers").exists()  # the spooled answers are in the store now


def _spooled(out: Path) -> set[str]:
    """The samples answered in the workers' spool files (runner/spool.py)."""
    lines = [
        json.loads(line)
        for path in (out / ".ray-answers").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    return {line["sample_id"] for line in lines if line["response"]["status"] == "ok"}


def test_a_killed_driver_takes_its_own_cluster_along_and_loses_no_answer(
    release: Path, server: ChatServer, tmp_path: Path
) -> None:
    """`kill -9` of a driver that started its own cluster (`--ray`): its workers make no new
    call once it is dead, no process of that cluster is left 10 s later (only this run's are
    looked at: they carry a mark in their environment), and the rerun stores the answers the
    workers had got: it sends again only what was in flight at the kill."""
    server.reset(latency=0.3, reply=scripted_reply)
    out = tmp_path / "out"
    command = _run_command(release, server, tmp_path, 4, "--ray")
    mark = secrets.token_hex(8)
    env = {**os.environ, **WORKER_ENV, RUN_ENV: mark}
    driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while server.stats().served < 10 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert driver.poll() is None, driver.stderr.read() if driver.stderr else ""
    driver.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    at_death = server.stats()
    driver.wait(timeout=30)
    seen, last_call = at_death.received, killed
    while marked(mark, RUN_ENV) and time.monotonic() - killed < 15:
        if server.stats().received > seen:
            seen, last_call = server.stats().received, time.monotonic()
        time.sleep(0.05)
    outlived = time.monotonic() - killed
    assert marked(mark, RUN_ENV) == [] and outlived < 10, f"{outlived:.1f} s"
    while server.stats().in_flight:  # what was on its way ends at the server
        time.sleep(0.05)
    after = server.stats()
    if after.received > seen:  # one was on its way as the last process went
        last_call = time.monotonic()
    # the workers stop at once: at most the calls that were starting as it died
    assert last_call - killed < 2.0 and after.received - at_death.received <= 4
    answered_before = _answered(out) | _spooled(out)
    assert 0 < len(answered_before) < 40

    results = run(config(release, out, tmp_path / "cache", spec_of(server), concurrency=4))
    assert results["n"] == 40 and results["errors"] == 0
    assert not (out / ".ray-answers").exists()  # the spooled answers are in the store now
    # the rerun asks exactly the questions without an answer, stored or spooled, each once ...
    assert server.stats().received - after.received == 40 - len(answered_before)
    assert server.stats().max_sends_per_prompt <= 2
    # ... and so sends again, of the prompts the server had answered, only those that were in
    # flight at the kill (a local run killed so loses those as well): at most the concurrency,
    # and those the workers started as it died (answered, but never stored: counted above)
    started_as_it_died = after.received - at_death.received
    assert server.stats().resent_after_answer - after.resent_after_answer <= 4 + started_as_it_died


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (NoWeights.spec, "no weights at /models/missing"),  # it cannot start in its workers
        (WhereAmI.spec, "device_type: 'cuda' there, 'cpu' here.*--model-opt device=cuda"),
        (OtherWeights.spec, "weights: 'cuda-copy' there, 'cpu-copy' here.*same checkpoint files"),
        (NotThere.spec, "cannot build model .*my_private_model"),  # it cannot be built there
    ],
)
def test_a_model_that_cannot_start_in_its_workers_or_is_another_there_stops_the_run(
    cluster: str, release: Path, tmp_path: Path, spec: str, said: str
) -> None:
    cfg = config(release, tmp_path / "out", tmp_path / "cache", spec, ray="auto", ray_workers=1)
    with pytest.raises(ConfigError, match=said):
        run(cfg)
    assert _answered(tmp_path / "out") == set()


def test_the_device_time_of_all_workers_is_summed(
    cluster: str, release: Path, tmp_path: Path
) -> None:
    import json

    out = tmp_path / "out"
    results = run(config(release, out, tmp_path / "cache", Timed.spec, ray="auto"))
    timing = results["timing"]
    # every call counted once, over the workers that took part (a worker still starting when
    # the 40 quick answers were done took none)
    devices = timing["devices"]
    assert timing["batches"] == 40 and devices in (1, 2)
    assert timing["device_s"] == pytest.approx(0.4)
    assert timing["device_busy"] == pytest.approx(0.4 / (devices * timing["wall_s"]), abs=1e-3)
    assert json.loads((out / "timing.json").read_text())["devices"] == devices


def test_local_models_ask_one_gpu_per_worker() -> None:
    assert gpus_per_worker("hf:Qwen/Qwen2-VL-2B-Instruct", ModelOptions()) == 1.0
    assert gpus_per_worker("vllm:some/model", ModelOptions()) == 1.0
    split = ModelOptions(extra={"tensor_parallel_size": "4"})
    assert gpus_per_worker("vllm:Qwen/Qwen2.5-VL-72B-Instruct", split) == 4.0
    assert gpus_per_worker("hf:x", ModelOptions(extra={"device": "cpu"})) == 0.0
    assert gpus_per_worker("openai:gpt-4o", ModelOptions()) == 0.0


def test_the_shared_limiter_bounds_paces_and_frees_a_dead_workers_slots(cluster: str) -> None:
    from vidbench.runner.ray.limiter import LimiterActor

    limiter = LimiterActor.remote(2, 20.0)  # 2 calls at once, 20 started per second
    started = time.monotonic()
    for _ in range(6):
        ray.get(limiter.acquire.remote("w1"))
        ray.get(limiter.release.remote("w1"))
    assert time.monotonic() - started >= 0.25  # 5 intervals of 50 ms
    ray.get([limiter.acquire.remote("dead"), limiter.acquire.remote("dead")])
    waiting = limiter.acquire.remote("w2")
    assert ray.wait([waiting], timeout=0.3)[0] == []  # both slots held by the dead worker
    assert ray.get(limiter.forget.remote("dead")) == 2
    ray.get(waiting, timeout=5)
    epoch = ray.get(limiter.acquire.remote("w2"))
    ray.get(limiter.rate_limited.remote(epoch))  # a 429: the bound halves for every worker
    assert ray.get(limiter.stats.remote())["limit"] == 1.0


def test_gpu_workers_on_a_cluster_without_gpus_stop_at_once(
    cluster: str, release: Path, tmp_path: Path
) -> None:
    """A worker asking for a GPU the cluster lacks would wait for ever: the run stops instead."""
    from vidbench.runner.ray.driver import RaySettings, ray_infer
    from vidbench.runner.ray.worker import WorkerSetup
    from vidbench.runner.run import Run
    from vidbench.runner.store import Store

    run_ = Run(config(release, tmp_path / "out", tmp_path / "cache", Poison.spec))
    setup = WorkerSetup(run_.task, Poison.spec, ModelOptions(), run_.plan, None, os.getcwd())
    settings = RaySettings(workers=1, gpus_per_worker=1.0)
    store = Store(tmp_path / "out")
    try:
        with pytest.raises(ConfigError, match="asks for 1 GPU and the cluster has 0"):
            ray_infer(run_.task, setup, run_.samples, store, 1, settings, {}, False)
    finally:
        store.close()


def test_no_worker_outlives_its_run(cluster: str, release: Path, tmp_path: Path) -> None:
    """Workers are killed when the run ends, also when it fails (its traceback holds them)."""
    cfg = config(release, tmp_path / "out", tmp_path / "cache", WhereAmI.spec, ray="auto")
    with pytest.raises(ConfigError) as failed:  # kept: its traceback holds the driver
        run(cfg)
    # The processes end first; Ray gives their CPUs back to the cluster a moment later.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
        worker_pids() or ray.available_resources().get("CPU") != 4.0
    ):
        time.sleep(0.1)
    assert worker_pids() == []
    assert ray.available_resources().get("CPU") == 4.0
    assert "not the same in the Ray workers" in str(failed.value)


def test_a_rerun_on_ray_scores_the_answers_to_the_requests_it_makes_now(
    cluster: str, release: Path, server: ChatServer, tmp_path: Path
) -> None:
    server.reset(reply=scripted_reply)
    out = tmp_path / "ray"
    cfg = config(release, out, tmp_path / "cache", spec_of(server), concurrency=4, ray="auto")
    before = run(cfg)["columns"], result_files(out)["samples"]
    with sqlite3.connect(out / "store.sqlite") as db:  # later answers to other requests (the
        db.execute(  # questions of an edited video, say), which the data no longer asks
            "INSERT INTO responses SELECT 'other-' || key, plan, sample_id, run_id, prompt_hash, "
            "request, 'The answer is (D)', input_tokens, output_tokens, latency_s, created + 1, "
            "truncated FROM responses"
        )
    server.reset(reply=scripted_reply)
    assert (run(cfg)["columns"], result_files(out)["samples"]) == before
    assert server.stats().received == 0
