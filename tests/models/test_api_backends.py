"""API backends against the fake server on 127.0.0.1: wire formats, statuses, retries, limits."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import time

import pytest
from openai._utils._json import openapi_dumps

from api_support import BACKENDS, FAKE_KEYS, ask, backend, image, request
from vidbench.core.errors import ConfigError
from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig
from vidbench.models.openai_backend import IMAGE_MARK, chat_body, chat_messages
from vidbench.models.registry import ModelOptions, load_model
from vidbench.models.wire import data_url
from vidbench.testing import ChatServer, FaultPlan, Reply


@pytest.fixture(autouse=True)
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake keys only; nothing in the environment may send a test to a real endpoint."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)


# ----------------------------------------------------------------------------- wire formats
def test_openai_compat_sends_images_in_order_with_generation_settings(fake) -> None:
    generation = GenerationConfig(temperature=0.3, top_p=0.9, max_tokens=17, seed=5)
    server = fake()
    model = backend("openai", server)
    [response] = ask(model, [request(1, generation=generation)])
    [body] = server.requests
    assert response.ok and response.text == "(A)"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert body["model"] == "fake-model"
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.3,
        0.9,
        17,
        5,
    )
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Answer with a letter."}
    kinds = [p["type"] for p in user["content"]]
    assert kinds == ["image_url", "text", "image_url", "text"]
    url = user["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == image(11).data  # the bytes as they are
    assert "detail" not in user["content"][0]["image_url"]
    assert model.identity() == {"spec": f"openai-compat:{server.base_url}#fake-model"}


def test_openai_body_is_what_the_sdk_would_serialise() -> None:
    """The request body vidbench serialises itself (images put in without json.dumps reading
    their base64) is byte for byte the SDK's own serialisation of the same payload, with text
    that JSON must escape around the images and an image shown twice."""
    text = 'Quote " backslash \\ tab \t née 北京 \U0001f600 and a mark-like "vidbench-image-0'
    images = (image(11), image(12))
    content = (images[0], TextPart(text), images[1], images[0], TextPart("\n"))
    messages = [Message("system", (TextPart("Answer with a letter."),)), Message("user", content)]
    urls: list[str] = []

    def marked(part: ImagePart) -> str:
        urls.append(data_url(part))
        return f"{IMAGE_MARK}{len(urls) - 1}"

    fields = {"model": "m", "temperature": 0.3, "top_p": 1.0, "max_tokens": 17, "seed": 5}
    body = chat_body({**fields, "messages": chat_messages(messages, "low", marked)}, urls)
    expected = openapi_dumps({**fields, "messages": chat_messages(messages, "low", data_url)})
    assert body == expected
    assert len(urls) == 3 and urls[0] == urls[2] and urls[0] != urls[1]
    assert json.loads(body)["messages"][1]["content"][1]["text"] == text


def test_seed_is_sent_only_when_set(fake) -> None:
    server = fake()
    ask(backend("openai", server), [request(1)])
    assert "seed" not in server.requests[0]


def test_detail_and_jpeg_quality_options(fake) -> None:
    server = fake()
    model = backend("openai", server, detail="low", jpeg_quality=40)
    ask(model, [request(1)])
    parts = server.requests[0]["messages"][1]["content"]
    images = [p["image_url"] for p in parts if p["type"] == "image_url"]
    assert all(i["detail"] == "low" for i in images)
    sent = base64.b64decode(images[0]["url"].split(",", 1)[1])
    assert sent[:2] == b"\xff\xd8" and sent != image(11).data  # re-encoded, still JPEG
    assert model.identity()["detail"] == "low" and model.identity()["jpeg_quality"] == 40


def test_openai_spec_reads_key_and_base_url_from_the_environment(fake, monkeypatch) -> None:
    server = fake(api_key="sk-test-openai-0123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-0123")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    model = load_model("openai:gpt-test", ModelOptions())
    [response] = ask(model, [request(1)])
    body = server.requests[0]
    assert response.ok
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body
    assert model.identity() == {"spec": "openai:gpt-test"}


@pytest.mark.slow
def test_anthropic_wire_format(fake) -> None:
    server = fake()
    model = backend("anthropic", server)
    [response] = ask(model, [request(1, generation=GenerationConfig(max_tokens=9))])
    [body] = server.requests
    assert response.ok and response.usage.input_tokens > 0
    assert body["system"] == "Answer with a letter."
    assert body["max_tokens"] == 9 and "temperature" not in body and "top_p" not in body
    [turn] = body["messages"]
    assert [b["type"] for b in turn["content"]] == ["image", "text", "image", "text"]
    source = turn["content"][0]["source"]
    assert source["type"] == "base64" and source["media_type"] == "image/jpeg"
    assert base64.b64decode(source["data"]) == image(11).data
    assert model.identity()["sampling"] == "provider-default"


def test_gemini_wire_format(fake) -> None:
    generation = GenerationConfig(temperature=0.2, top_p=0.8, max_tokens=11, seed=3)
    server = fake()
    [response] = ask(backend("gemini", server), [request(1, generation=generation)])
    [body] = server.requests
    assert response.ok and response.usage.input_tokens > 0
    assert body["systemInstruction"]["parts"][0]["text"] == "Answer with a letter."
    [content] = body["contents"]
    parts = content["parts"]
    assert [next(iter(p)) for p in parts] == ["inlineData", "text", "inlineData", "text"]
    assert base64.urlsafe_b64decode(parts[0]["inlineData"]["data"]) == image(11).data
    config = body["generationConfig"]
    assert (config["temperature"], config["topP"], config["maxOutputTokens"], config["seed"]) == (
        0.2,
        0.8,
        11,
        3,
    )


# ----------------------------------------------------------------------------- statuses
def _scripted(body: dict) -> str | Reply:
    text = json.dumps(body)
    if "please refuse" in text:
        return Reply(refusal="I can't help with that.")
    if "please block" in text:
        return Reply(blocked="output")
    if "block the prompt" in text:
        return Reply(blocked="prompt")
    if "say nothing" in text:
        return Reply(text=None)
    return "(B)"


# What each provider's wire format can say: Anthropic reports every safety stop as a refusal;
# Gemini has no refusal field (a refusal is just text).
EXPECTED_STATUS = {
    "openai": ("ok", "refused", "blocked", "blocked", "empty"),
    "anthropic": ("ok", "refused", "refused", "refused", "empty"),
    "gemini": ("ok", "ok", "blocked", "blocked", "empty"),
}


@pytest.mark.parametrize("kind", BACKENDS)
def test_empty_refused_and_blocked_replies_get_their_status(fake, kind: str) -> None:
    prompts = ("fine", "please refuse", "please block", "block the prompt", "say nothing")
    server = fake(reply=_scripted)
    responses = ask(backend(kind, server), [request(i, p) for i, p in enumerate(prompts)])
    assert server.stats().received == len(prompts)  # none of these is retried
    assert tuple(r.status for r in responses) == EXPECTED_STATUS[kind]
    for r in responses:
        assert (r.text is None) == (r.status != "ok")
        assert (r.error is None) == (r.status == "ok")


# ----------------------------------------------------------------------------- retries
FAILURE_OF = {
    "429": "rate_limit",
    "500": "server",
    "timeout": "timeout",
    "malformed": "malformed",
    "disconnect": "connection",
    "bad-utf8": "malformed",  # a complete 200 body that is not UTF-8
    "non-text": "malformed",  # a complete 200 body whose answer text is a number
}


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("fault", list(FAILURE_OF))
def test_each_fault_is_retried_until_answered(fake, kind: str, fault: str) -> None:
    server = fake(faults=FaultPlan(script=(fault, fault)))
    # a short timeout only where the fault is one (the server holds the request): elsewhere a
    # busy machine's slow answer must not count as a timeout and be asked again
    model = backend(kind, server, timeout=0.5 if fault == "timeout" else 10.0)
    [response] = ask(model, [request(1)])
    assert server.stats().received == 3
    assert response.ok and response.text == "(A)"
    assert model.stats.failures == {FAILURE_OF[fault]: 2}


@pytest.mark.parametrize("kind", BACKENDS)
def test_retries_are_bounded_then_the_request_is_an_error(fake, kind: str) -> None:
    server = fake(faults=FaultPlan(rate=1.0, kinds=("500",)))
    [response] = ask(backend(kind, server, max_retries=2), [request(1)])
    assert server.stats().received == 3
    assert response.status == "error" and response.text is None
    assert "gave up after 3 attempts" in response.error
    assert "HTTP 500: injected fault 500" in response.error


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize(
    ("fault", "said"),
    [  # google-genai checks the body's shape itself (pydantic): its message names the value
        ("bad-utf8", "malformed reply: the body is not valid UTF-8"),
        ("non-text", "malformed reply: .*(not text: 5 |input_value=5)"),
    ],
)
def test_a_reply_that_stays_unreadable_is_an_error_that_says_why(
    fake, kind: str, fault: str, said: str
) -> None:
    server = fake(faults=FaultPlan(rate=1.0, kinds=(fault,)))
    [response] = ask(backend(kind, server, max_retries=1), [request(1)])
    assert server.stats().received == 2
    assert response.status == "error" and response.text is None
    assert "gave up after 2 attempts" in response.error and re.search(said, response.error, re.S)


@pytest.mark.parametrize("kind", BACKENDS)
def test_client_errors_are_not_retried(fake, kind: str) -> None:
    def reply(body: dict) -> Reply:
        return Reply(http_status=413, error="request too large: 99 images")

    server = fake(faults=FaultPlan(script=("400",)), reply=reply)
    responses = ask(backend(kind, server), [request(1), request(2)])
    assert server.stats().received == 2
    assert all(r.status == "rejected" and "not retried" in r.error for r in responses)
    errors = sorted(r.error for r in responses)  # each saying what must change first
    assert any("HTTP 400: injected fault 400" in e and "change the request" in e for e in errors)
    too_large = "HTTP 413: request too large: 99 images"
    assert any(too_large in e and "--max-tokens" in e for e in errors)


def test_retry_after_is_honoured(fake) -> None:
    server = fake(faults=FaultPlan(script=("429",)), retry_after=0.5)
    started = time.monotonic()
    [response] = ask(backend("openai", server, backoff=0), [request(1)])
    waited = time.monotonic() - started
    assert response.ok and waited >= 0.5


def test_backoff_without_retry_after_is_short_when_configured(fake) -> None:
    server = fake(faults=FaultPlan(script=("500", "500", "500")))
    started = time.monotonic()
    [response] = ask(backend("openai", server, backoff=0.001), [request(1)])
    assert response.ok and time.monotonic() - started < 1.0


# ----------------------------------------------------------------------------- concurrency
def test_calls_in_flight_never_exceed_the_concurrency(fake) -> None:
    server = fake(latency=0.05, capacity=1000)
    model = backend("openai", server, concurrency=5)
    responses = ask(model, [request(i) for i in range(40)])
    stats = server.stats()
    assert all(r.ok for r in responses)
    assert stats.max_in_flight == 5


def test_limiter_backs_off_on_429_and_every_request_is_answered(fake) -> None:
    """A server serving 3 at once that answers 429 beyond that: the limiter shrinks from 12."""
    server = fake(latency=0.05, capacity=3, queue=False)
    model = backend("openai", server, concurrency=12, max_retries=30, backoff=0.02)
    responses = ask(model, [request(i) for i in range(36)])
    stats = server.stats()
    assert all(r.ok for r in responses)
    assert stats.faults["capacity"] > 0 and stats.max_serving <= 3
    assert model.limiter.decreases >= 1 and model.limiter.lowest <= 6
    assert model.stats.failures["rate_limit"] == stats.faults["capacity"]


# ----------------------------------------------------------------------------- bad config
@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        ("nosuch:model", {}, "unknown model spec"),
        ("random:3", {}, "takes no argument"),
        ("constant", {}, "needs the answer text"),
        ("python:nomodule", {}, "expected python:package.module:ClassName"),
        ("python:support_models:Missing", {}, "cannot load"),
        ("python:asyncio:Queue", {}, "is not a vidbench Model"),
        ("openai:gpt-test", {}, "OPENAI_API_KEY"),
        ("openai:", {}, "needs a model name"),
        ("anthropic:claude", {"api_key_env": "NOT_SET_ANYWHERE"}, "NOT_SET_ANYWHERE"),
        ("openai-compat:http://127.0.0.1:1/v1", {}, "BASE_URL#MODEL"),
        ("openai-compat:127.0.0.1:1/v1#m", {}, "not an http(s) URL"),
        ("openai-compat:http://127.0.0.1:1/v1#m", {"detail": "medium"}, "low, high, auto"),
        ("openai-compat:http://127.0.0.1:1/v1#m", {"max_retries": "-1"}, "expected >= 0"),
        ("openai-compat:http://127.0.0.1:1/v1#m", {"timeout": "soon"}, "number"),
        ("openai-compat:http://127.0.0.1:1/v1#m", {"jpeg_quality": "101"}, "1..100"),
        ("openai-compat:http://127.0.0.1:1/v1#m", {"base_url": "x"}, "does not take"),
        ("gemini:g", {"thinking_budget": "lots"}, "whole number"),
        ("blind:", {}, "needs the model to wrap"),
        ("blind:nosuch", {}, "unknown model spec"),
        ("hf:/no/such/dir", {}, "no model directory at /no/such/dir"),
        ("hf:./missing-ckpt", {}, "no model directory at missing-ckpt"),
        ("hf:nobody/not-cached-model", {}, "not in the Hugging Face cache"),
        ("hf:", {}, "name a model"),
        ("hf:x/y", {"device": "gpu"}, "device='gpu'"),
        ("hf:x/y", {"dtype": "fp8"}, "dtype='fp8'"),
        ("hf:x/y", {"batch_size": "0"}, "batch_size='0'"),
        ("hf:x/y", {"colour": "red"}, "does not take --model-opt colour"),
    ],
)
def test_bad_configuration_stops_before_any_call(spec: str, extra: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_model(spec, ModelOptions(extra=extra))


def test_missing_gemini_key_names_both_variables(monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        load_model("gemini:g", ModelOptions())


@pytest.mark.parametrize("kind", BACKENDS)
def test_unreachable_server_fails_at_start(kind: str) -> None:
    server = ChatServer()  # bound, never started: the port is closed once we stop it
    server.stop()
    model = backend(kind, server)
    with pytest.raises(ConfigError, match=f"cannot reach {server.root_url}"):
        ask(model, [request(1)])


def test_rejected_key_fails_at_start_without_showing_it(fake, monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test-wrong-0123456789")
    server = fake(api_key="sk-test-right")
    model = backend("openai", server, api_key_env="MY_KEY")
    with pytest.raises(ConfigError, match="rejected the API key") as caught:
        ask(model, [request(1)])
    assert server.stats().received == 0
    assert "sk-test-wrong-0123456789" not in str(caught.value)  # the server quoted it
    assert "[api key]" in str(caught.value)


def test_keys_are_not_in_identity_or_repr(monkeypatch) -> None:
    model = load_model("anthropic:claude-test", ModelOptions())
    text = json.dumps(model.identity()) + repr(model) + repr(vars(model).get("spec"))
    assert FAKE_KEYS["ANTHROPIC_API_KEY"] not in text


def test_openai_compat_never_sends_the_openai_key_unasked(fake, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-secret")
    server = fake(api_key="sk-test-openai-secret")  # it would accept the key if it got it
    with pytest.raises(ConfigError, match="rejected the API key"):
        ask(backend("openai", server), [request(1)])
    monkeypatch.setenv("LOCAL_KEY", "sk-test-openai-secret")
    [response] = ask(backend("openai", server, api_key_env="LOCAL_KEY"), [request(1)])
    assert response.ok


def test_a_request_that_cannot_be_built_fails_alone(fake) -> None:
    broken = request(1)
    user = broken.messages[1]
    bad_image = dataclasses.replace(user.content[0], data=b"not a jpeg")
    broken = dataclasses.replace(
        broken,
        messages=(broken.messages[0], dataclasses.replace(user, content=(bad_image,))),
    )
    server = fake()
    responses = ask(backend("openai", server, jpeg_quality=50), [broken, request(2)])
    assert responses[0].status == "rejected" and "cannot build the request" in responses[0].error
    assert responses[1].ok and server.stats().received == 1
