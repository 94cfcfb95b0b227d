"""Whole runs (`vidbench run` / pipeline.Run) against the fake server: faults, reruns, statuses,
concurrency, the blind baseline, and API keys that must never be written anywhere."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
from pathlib import Path

import pytest

from api_support import ask, backend, request
from conftest import make_qa_dataset
from vidbench.benchmarks.fourd.synthetic.release import write_release
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE, ConfigError
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store
from vidbench.testing import ChatServer, FaultPlan, Reply, request_text


@pytest.fixture(autouse=True)
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def config(data: Path, out: Path, model: str, **options: str) -> RunConfig:
    return RunConfig(
        task="4dbench-qa",
        data=str(data),
        model=model,
        out=str(out),
        concurrency=32,
        cache_dir=str(out.parent / "cache"),
        frames={"max_side": 16},
        model_options={"backoff": "0.01", **options},
        progress=False,
    )


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


@pytest.mark.slow
def test_751_requests_with_20_percent_faults_complete_and_nothing_is_sent_twice(
    fake, tmp_path: Path
) -> None:
    data = write_release(tmp_path / "data", questions=751, objects=10, frames=12, size=32)
    faults = FaultPlan(rate=0.2, kinds=("429", "500", "timeout", "malformed", "disconnect"))
    server = fake(latency=0.005, faults=faults)
    out = tmp_path / "out"
    # a 2 s deadline: a reply served on a loaded machine still arrives inside it (with 1 s, a
    # starved client gave up on answers the server had sent, and sent them again)
    cfg = config(data, out, f"openai-compat:{server.base_url}#fake", max_retries="1", timeout="2")

    # Run 1: every request is answered or, after 1 + 1 attempts, recorded as an error.
    Run(cfg).run()
    first = results_of(out)
    stats = server.stats()
    answered, failed = first["n_scored"], first["errors"]
    assert first["n"] == 751 and answered + failed == 751
    assert failed > 0 and first["errors_by_status"] == {"error": failed}
    assert all("gave up after 2 attempts" in e["error"] for e in first["error_details"])
    assert stats.distinct_prompts == 751 and stats.max_sends_per_prompt <= 2
    assert stats.served == answered and sum(stats.faults.values()) > 100
    assert stats.resent_after_answer == 0

    # Run 2, same command: only the failed requests go out again.
    sent_before = server.sends()
    Run(cfg).run()
    again = {k for k, n in server.sends().items() if n > sent_before[k]}
    assert len(again) == failed
    assert server.stats().resent_after_answer == 0

    # Run 3 without faults answers the rest; run 4 sends nothing at all.
    server.set_faults(FaultPlan())
    Run(cfg).run()
    assert results_of(out)["n_scored"] == 751 and results_of(out)["errors"] == 0
    received = server.stats().received
    run = Run(cfg)
    stats4 = run.infer()
    assert (stats4.reused, stats4.answered, stats4.failed) == (751, 0, 0)
    final = server.stats()
    assert final.received == received  # zero new requests
    assert final.served == 751 and final.resent_after_answer == 0  # each answered exactly once


def _question_number(body: dict) -> int:
    return int(re.search(r"Question (\d) about object", request_text(body)).group(1))


def test_the_advice_says_which_failed_calls_a_rerun_retries_and_which_need_a_change(
    fake, tmp_path: Path, monkeypatch, capsys
) -> None:
    too_long = "This model's maximum context length is 128 tokens; you requested 900"
    replies = {
        0: Reply(http_status=400, error=too_long),
        1: Reply(http_status=500, error="overloaded"),
        2: Reply(http_status=413, error="request_too_large"),
    }
    server = fake(reply=lambda body: replies.get(_question_number(body), "(A)"))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    out = tmp_path / "out"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", "openai:gpt"]
    options = ["--model-opt", "backoff=0.01", "--model-opt", "max_retries=1"]
    capsys.readouterr()
    assert main([*argv, "--out", str(out), *options]) == EXIT_INCOMPLETE
    said = " ".join(capsys.readouterr().err.split())
    assert results_of(out)["errors_by_status"] == {"rejected": 2, "error": 1}
    assert "retry 1 failed call (timeouts, server errors)" in said
    assert "2 calls the API refused would be refused again" in said
    assert "change first --max-tokens or the frames (a smaller request) (2)" in said

    server.reset(reply=lambda body: "(A)" if _question_number(body) else replies[0])
    assert main([*argv, "--out", str(out), *options]) == EXIT_INCOMPLETE  # 0 is refused again
    said = " ".join(capsys.readouterr().err.split())
    assert "run the same command again to retry" not in said
    assert "1 call the API refused" in said


def test_empty_refused_and_blocked_are_reported_in_results(fake, tmp_path: Path) -> None:
    replies = {1: Reply(text=None), 2: Reply(refusal="No."), 3: Reply(blocked="output")}
    server = fake(reply=lambda body: replies.get(_question_number(body), "(A)"))
    data = make_qa_dataset(tmp_path / "data", n_objects=2)
    out = tmp_path / "out"
    Run(config(data, out, f"openai-compat:{server.base_url}#fake")).run()
    results = results_of(out)
    assert results["n"] == 10 and results["n_scored"] == 4
    assert results["errors_by_status"] == {"empty": 2, "refused": 2, "blocked": 2}
    details = {e["status"]: e["error"] for e in results["error_details"]}
    assert "refused: No." in details["refused"]
    assert "content_filter" in details["blocked"]
    assert results["usage"]["input_tokens"] > 0 and results["usage"]["requests"] == 4
    assert server.stats().received == 10  # statuses are answers, not retried


def test_a_huge_reply_is_stored_whole_and_cut_in_samples_jsonl(fake, tmp_path: Path) -> None:
    from vidbench.runner.score import RAW_OUTPUT_CAP

    huge = "The answer is (B). " + "x" * 1_000_000
    server = fake(reply=lambda body: huge if _question_number(body) == 1 else "(A)")
    data = make_qa_dataset(tmp_path / "data", n_objects=2)
    out = tmp_path / "out"
    Run(config(data, out, f"openai-compat:{server.base_url}#fake")).run()
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    cut = [r for r in records if "raw_output_cut" in r]
    assert len(cut) == 2 and len(records) == 10  # question 1 of both objects
    for record in cut:
        assert record["raw_output"] == huge[:RAW_OUTPUT_CAP]
        assert record["parsed"] == "B"  # scored on the whole reply
        assert f"the first 65,536 of {len(huge):,} characters" in record["raw_output_cut"]
        assert "store.sqlite" in record["raw_output_cut"]
    assert (out / "samples.jsonl").stat().st_size < 3 * RAW_OUTPUT_CAP
    with sqlite3.connect(out / "store.sqlite") as db:
        stored = [row[0] for row in db.execute("SELECT text FROM responses")]
    assert stored.count(huge) == 2  # the store keeps every reply whole


def test_no_api_key_in_store_logs_results_or_any_file(
    fake, tmp_path: Path, monkeypatch, capsys, caplog
) -> None:
    key = "sk-test-" + "k3y" * 12
    quoted = {0: Reply(http_status=400, error=f"bad request from {key}")}  # a server quoting it
    server = fake(
        api_key=key,
        faults=FaultPlan(rate=0.3, kinds=("429", "500", "malformed"), seed=1),
        reply=lambda body: quoted.get(_question_number(body), "(A)"),
    )
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    caplog.set_level(logging.DEBUG)
    data = make_qa_dataset(tmp_path / "data", n_objects=2)
    out = tmp_path / "out"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", "openai:gpt"]
    options = ["--model-opt", "backoff=0.01", "--model-opt", "max_retries=8"]
    code = main([*argv, "--out", str(out), "--cache-dir", str(tmp_path / "c"), *options])
    assert code == EXIT_INCOMPLETE  # two questions failed: the results say so, and the exit code
    results = results_of(out)
    assert results["errors_by_status"] == {"rejected": 2}  # question 0 of both objects
    assert all("[api key]" in e["error"] for e in results["error_details"])

    monkeypatch.setenv("OPENAI_API_KEY", key[::-1])  # a wrong key, quoted back by the server
    assert main([*argv, "--out", str(tmp_path / "o2"), *options]) == 2

    captured = capsys.readouterr()
    assert "rejected the API key" in captured.err
    for text in (captured.out, captured.err, caplog.text):
        assert key not in text and key[::-1] not in text
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "data" not in p.parts]
    assert any(p.name == "samples.jsonl" for p in files)
    assert any(p.name.startswith("store.sqlite") for p in files)
    for path in files:
        content = path.read_bytes()
        assert key.encode() not in content and key[::-1].encode() not in content, path


def test_unreachable_server_stops_the_run_before_any_frame_is_decoded(tmp_path: Path) -> None:
    closed = ChatServer()
    closed.stop()
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=f"cannot reach {re.escape(closed.base_url)}"):
        Run(config(data, out, f"openai-compat:{closed.base_url}#fake")).infer()
    cache = tmp_path / "cache"
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))
    store = Store(out)
    assert store.count_responses() == 0 and store.last_failures("any") == {}
    store.close()


def test_concurrency_seen_by_the_server_stays_within_the_limit(fake, tmp_path: Path) -> None:
    server = fake(latency=0.05, capacity=1000)
    data = make_qa_dataset(tmp_path / "data", n_objects=4)
    cfg = config(data, tmp_path / "out", f"openai-compat:{server.base_url}#fake")
    cfg.concurrency = 6
    Run(cfg).run()
    stats = server.stats()
    assert stats.served == 20 and stats.max_in_flight <= 6


def test_server_capacity_queues_requests(fake) -> None:
    server = fake(latency=0.1, capacity=2)
    started = time.monotonic()
    responses = ask(backend("openai", server, concurrency=6), [request(i) for i in range(6)])
    stats = server.stats()
    assert all(r.ok for r in responses)
    assert stats.max_serving == 2 and stats.max_in_flight == 6
    assert time.monotonic() - started >= 0.3


def test_blind_baseline_sends_no_image_and_nothing_else_changes(fake, tmp_path: Path) -> None:
    server = fake()
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    seeing, blind = tmp_path / "seeing", tmp_path / "blind"
    spec = f"openai-compat:{server.base_url}#fake"
    Run(config(data, seeing, spec)).run()
    with_images = server.requests
    server.reset()
    Run(config(data, blind, f"blind:{spec}")).run()
    without = server.requests
    assert len(with_images) == len(without) == 5
    for a, b in zip(
        sorted(with_images, key=request_text), sorted(without, key=request_text), strict=True
    ):
        [user_a], [user_b] = a["messages"], b["messages"]
        assert sum(p["type"] == "image_url" for p in user_a["content"]) == 18
        assert user_b["content"] == request_text(a)  # the same text, as a plain string
        assert {k: v for k, v in a.items() if k != "messages"} == {
            k: v for k, v in b.items() if k != "messages"
        }
    identity = results_of(blind)["model_identity"]
    assert identity["blind"] is True and identity["model"] == {"spec": spec}
    assert results_of(blind)["plan"] != results_of(seeing)["plan"]


def test_blind_wraps_any_spec(tmp_path: Path) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    out = tmp_path / "out"
    cfg = config(data, out, "blind:random")
    cfg.model_options = {}
    Run(cfg).run()
    assert results_of(out)["n_scored"] == 5 and results_of(out)["model"] == "blind:random"


def test_price_table_turns_usage_into_money(fake, tmp_path: Path, monkeypatch) -> None:
    server = fake()
    spec = f"openai-compat:{server.base_url}#fake"
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    Run(config(data, tmp_path / "plain", spec)).run()
    assert results_of(tmp_path / "plain")["cost"] is None  # no table, no money

    table = tmp_path / "prices.json"
    table.write_text(json.dumps({spec: {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}))
    monkeypatch.setenv("VIDBENCH_PRICES", str(table))
    Run(config(data, tmp_path / "priced", f"blind:{spec}")).run()
    results = results_of(tmp_path / "priced")
    usage, cost = results["usage"], results["cost"]
    expected = usage["input_tokens"] * 2.0 / 1e6 + usage["output_tokens"] * 8.0 / 1e6
    assert cost["currency"] == "USD" and cost["total"] == pytest.approx(expected, abs=1e-6)

    table.write_text(json.dumps({"openai:other": {"input_per_mtok": 1, "output_per_mtok": 1}}))
    Run(config(data, tmp_path / "unpriced", spec)).run()
    cost = results_of(tmp_path / "unpriced")["cost"]
    assert cost["total"] is None and "no price for" in cost["note"]


def test_every_failed_attempt_is_kept_in_the_store(fake, tmp_path: Path) -> None:
    """docs/how-to/resume.md: the store's `failures` table keeps every failed attempt, those
    tried again (status `retried`) as well as a call's last one; none of them is an outcome."""
    faults = FaultPlan(rate=0.3, kinds=("429", "500", "malformed", "disconnect"), seed=3)
    server = fake(faults=faults)
    data = make_qa_dataset(tmp_path / "data", n_objects=8)  # 40 questions
    out = tmp_path / "out"
    model = f"openai-compat:{server.base_url}#fake"
    Run(config(data, out, model, max_retries="2")).run()
    injected = sum(server.stats().faults.values())
    results = results_of(out)
    with sqlite3.connect(out / "store.sqlite") as db:
        rows = db.execute("SELECT sample_id, status, error FROM failures ORDER BY id").fetchall()
    retried = [row for row in rows if row[1] == "retried"]
    assert injected > 5 and len(retried) > 5
    assert len(rows) == injected  # one row per failed attempt, whatever came of the call
    assert len(rows) - len(retried) == results["errors"]  # the calls that gave up
    kinds = "rate_limit|server|malformed|connection"
    assert all(
        re.fullmatch(rf"{re.escape(sample)}: attempt [12] failed, tried again: ({kinds}): .+", e)
        for sample, _, e in retried
    ), retried[:3]
    answered = {
        r["id"]
        for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
        if r["status"] == "ok"
    }
    assert {sample for sample, _, _ in retried} & answered  # kept though the call then succeeded
