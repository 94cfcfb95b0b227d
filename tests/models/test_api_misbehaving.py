"""The API backends against a server that misbehaves as real APIs do (a real HTTP server on
127.0.0.1, scripted answer by answer): what is retried, what stops at once, what is an answer.

A reply cut at its token limit is an answer marked `truncated` (each API's own stop reason); a
content given as a list of parts is read; a spent quota (a 429 that says so), a Retry-After
longer than vidbench waits and a rejected key are not retried, and after a rejected key or a
spent quota no other call is sent; Gemini's RetryInfo is waited like a Retry-After."""

from __future__ import annotations

import email.utils
import json
import time
from pathlib import Path

import pytest

from api_support import (
    BACKENDS,
    FAKE_KEYS,
    Answer,
    RawServer,
    ask,
    backend,
    completion,
    openai_error,
    request,
)
from conftest import make_qa_dataset
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.testing import Reply


@pytest.fixture(autouse=True)
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)


# ----------------------------------------------------------------------- cut at the token limit
@pytest.mark.parametrize("kind", BACKENDS)
def test_a_reply_cut_at_its_token_limit_is_an_answer_marked_truncated(fake, kind: str) -> None:
    def reply(body: dict) -> str | Reply:
        return Reply(text="1", truncated=True) if "cut" in str(body) else "1"

    server = fake(reply=reply)
    cut, whole = ask(backend(kind, server), [request(1, "cut me"), request(2, "whole")])
    assert (cut.ok, cut.text, cut.truncated) == (True, "1", True)
    assert (whole.ok, whole.truncated) == (True, False)
    assert server.stats().received == 2  # an answer: not asked again


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_reply_without_text_names_the_model_and_says_it_hit_the_token_limit(
    fake, kind: str
) -> None:
    server = fake(reply=lambda body: Reply(text=None, truncated=True))
    model = backend(kind, server)
    [response] = ask(model, [request(1)])
    assert response.status == "empty" and response.text is None
    assert response.error.startswith(f"{model.spec}: the reply has no text")
    assert "stopped at its token limit before any text" in response.error


# ----------------------------------------------------------------------- bodies real servers send
def test_content_as_a_list_of_parts_is_read_as_its_text_parts() -> None:
    parts = [
        {"type": "thinking", "thinking": "the cube is red"},
        {"type": "text", "text": "(B)"},
        {"type": "text", "text": " because red"},
    ]
    with RawServer(completion(parts)) as server:
        [response] = ask(backend("openai", server), [request(1)])
    assert (response.status, response.text) == ("ok", "(B) because red")
    assert server.posts == 1


def test_a_list_of_parts_without_text_is_an_empty_reply() -> None:
    with RawServer(completion([{"type": "thinking", "thinking": "hmm"}])) as server:
        [response] = ask(backend("openai", server), [request(1)])
    assert response.status == "empty" and response.text is None
    assert server.posts == 1


def test_a_body_that_is_not_json_is_retried_then_an_error_naming_it() -> None:
    page = Answer(body=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
    with RawServer(page, page, completion("(C)")) as server:
        [response] = ask(backend("openai", server, max_retries=1), [request(1)])
        assert response.status == "error" and server.posts == 2
        assert "gave up after 2 attempts; last: malformed" in response.error
        assert response.error.startswith("openai-compat:")  # the model is named
        [again] = ask(backend("openai", server, max_retries=1), [request(1)])
    assert again.ok and again.text == "(C)"


def test_missing_usage_is_unknown_usage_not_a_failure() -> None:
    with RawServer(completion("(A)", usage=False)) as server:
        [response] = ask(backend("openai", server), [request(1)])
    assert response.ok and response.usage.input_tokens == 0 and server.posts == 1
    assert response.usage.unknown == 1  # not a complete-looking 0 tokens


def test_a_run_whose_server_sends_no_usage_says_its_usage_and_cost_are_a_lower_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.json"
    data = make_qa_dataset(tmp_path / "data", n_objects=1)
    with RawServer(completion("(A)", usage=False)) as server:
        spec = f"openai-compat:{server.base_url}#m"
        prices.write_text(json.dumps({spec: {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}))
        monkeypatch.setenv("VIDBENCH_PRICES", str(prices))
        for model, out in ((spec, "out"), ("random", "baseline")):
            argv = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--model", model]
            assert main([*argv, "--out", str(tmp_path / out)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["usage"] == {
        "requests": 5, "input_tokens": 0, "output_tokens": 0, "unknown_usage": 5
    }  # fmt: skip
    assert results["cost"]["lower_bound"] is True
    assert "usage unknown for 5 calls" in results["cost"]["note"]
    assert "usage unknown for 5 calls" in said and said.count("usage unknown") == 1
    baseline = json.loads((tmp_path / "baseline" / "results.json").read_text())
    assert "unknown_usage" not in baseline["usage"]  # no API call: nothing unknown


# ----------------------------------------------------------------------- what is not retried
def test_a_spent_quota_is_not_retried_and_stops_every_later_call() -> None:
    spent = openai_error(429, "You exceeded your current quota", code="insufficient_quota")
    with RawServer(spent) as server:
        model = backend("openai", server, concurrency=1, max_retries=5)
        responses = ask(model, [request(i) for i in range(4)])
    assert server.posts == 1  # one call learnt it; the others were not sent
    assert all(r.status == "rejected" for r in responses)  # a rerun gets the same answer
    assert all("quota: HTTP 429: You exceeded your current quota" in r.error for r in responses)
    assert all("change the quota" in r.error for r in responses)
    assert sum("not sent" in r.error for r in responses) == 3
    assert model.limiter.decreases == 0  # a spent quota is no rate limit to back off from


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_key_refused_mid_run_stops_every_later_call(status: int) -> None:
    refused = openai_error(status, "Incorrect API key provided")
    with RawServer(completion("(A)"), refused) as server:
        model = backend("openai", server, concurrency=1)
        responses = ask(model, [request(i) for i in range(5)])
    assert server.posts == 2  # one answered, one refused, three not sent
    assert [r.status for r in responses] == ["ok"] + ["rejected"] * 4
    assert all(f"HTTP {status}: Incorrect API key" in r.error for r in responses[1:])
    change = "the model name" if status == 404 else "the API key"
    assert all(f"change {change}" in r.error for r in responses[1:])
    assert all("not retried" in r.error for r in responses[1:])


def test_a_run_whose_key_is_refused_mid_run_says_why_and_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = make_qa_dataset(tmp_path / "data", n_objects=2)
    refused = openai_error(401, "Incorrect API key provided")
    with RawServer(completion("(A)"), refused) as server:
        spec = f"openai-compat:{server.base_url}#m"
        code = main(
            ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--out",
             str(tmp_path / "out"), "--model", spec, "--concurrency", "1"]
        )  # fmt: skip
    assert code == EXIT_INCOMPLETE and server.posts == 2  # 10 questions, 8 not sent
    said = " ".join(capsys.readouterr().err.split())
    assert "9 error(s)" in said and "the first: 00000000000000000000000000000000_" in said
    assert f"{spec}: " in said and "client: HTTP 401: Incorrect API key" in said
    assert "9 calls the API refused would be refused again" in said  # no retry would help
    assert "change first the API key (or its access) (9)" in said
    assert "run the same command again to retry" not in said


def test_a_server_that_stops_answering_stops_being_asked() -> None:
    """4 calls in a row out of attempts, none answered in between: the rest are not sent (a
    dead server would cost every request of the run all its attempts). An answer in between
    starts the count again."""
    down = openai_error(503, "Service Unavailable")
    with RawServer(down, down, down, completion("(A)"), down) as server:
        model = backend("openai", server, concurrency=1, max_retries=0)
        responses = ask(model, [request(i) for i in range(10)])
    assert server.posts == 8  # 3 failed, 1 answered, 4 failed in a row, then none sent
    assert [r.status for r in responses] == ["error"] * 3 + ["ok"] + ["error"] * 6
    assert all("HTTP 503: Service Unavailable" in r.error for r in responses[4:8])
    assert all(
        "not sent: 4 calls in a row gave up (the last: server: HTTP 503" in r.error
        and "the server is not answering" in r.error
        for r in responses[8:]
    )


def test_a_retry_after_longer_than_vidbench_waits_is_not_retried() -> None:
    later = openai_error(429, "Rate limit reached", retry_after="3600")
    with RawServer(later) as server:
        started = time.monotonic()
        [response] = ask(backend("openai", server), [request(1)])
    assert time.monotonic() - started < 5 and server.posts == 1
    assert "Retry-After: 3600 s" in response.error and "run again later" in response.error


def test_a_retry_after_as_an_http_date_is_waited() -> None:
    soon = email.utils.formatdate(time.time() + 2, usegmt=True)  # 1..2 s from now
    with RawServer(openai_error(429, "slow down", retry_after=soon), completion("(D)")) as server:
        started = time.monotonic()
        [response] = ask(backend("openai", server, backoff=0), [request(1)])
    assert response.ok and response.text == "(D)" and server.posts == 2
    assert time.monotonic() - started >= 0.9


def test_gemini_retry_info_is_waited_like_a_retry_after() -> None:
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}
    error = {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}
    exhausted = Answer(429, {"error": {**error, "details": [info]}})
    ok = Answer(
        body={
            "candidates": [{"content": {"role": "model", "parts": [{"text": "(B)"}]}}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1},
        }
    )
    with RawServer(exhausted, ok) as server:
        started = time.monotonic()
        [response] = ask(backend("gemini", server, backoff=0), [request(1)])
    assert response.ok and response.text == "(B)" and server.posts == 2
    assert time.monotonic() - started >= 1.0  # backoff=0 would not have waited


def test_a_connection_cut_mid_body_is_retried() -> None:
    cut = Answer(body=b'{"id": "chatcmpl-1", "choices": [', cut=True)
    with RawServer(cut, completion("(A)")) as server:
        model = backend("openai", server)
        [response] = ask(model, [request(1)])
    assert response.ok and server.posts == 2
    assert set(model.stats.failures) <= {"connection", "malformed"}
