"""Browser fixtures for every Playwright test (loaded from conftest.py as a pytest plugin).

Playwright drives Debian's Chromium (/usr/bin/chromium; `./dev` installs it), never a browser
Playwright downloads. `browser` is one Chromium per test module; `open_page(context=None)` gives
a page in a fresh context (or the one given) that records every console error, dialog and
request to a host other than 127.0.0.1 (such requests are also aborted): the test fails at
teardown if any was seen that it did not `watch.allow(...)`. Each page's last state is kept as a
screenshot under test-artifacts/ (git-ignored). `serve_asgi(app)` runs an ASGI app with uvicorn
on 127.0.0.1 on a free port in a thread; the `serve_app` fixture does it for a test, until its
pages are closed. `web` holds the three (`web.serve`, `web.open`, `web.watch`) for a test that
uses them all.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# without the background-networking flags Chromium phones home and this closed network refuses it
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
LOCAL_SCHEMES = ("data", "blob", "about", "file")


@dataclass
class Watch:
    """What the pages of one test did that a well-behaved page never does."""

    problems: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Accept problems matching `pattern` (e.g. the console line of an expected 409)."""
        self.allowed.append(re.compile(pattern))

    def add(self, problem: str) -> None:
        self.problems.append(problem)

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(a.search(p) for a in self.allowed)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # module scope, not session: Playwright's sync API keeps an event loop running in the main
    # thread while it is open, and other tests' asyncio.run() would fail under it
    if not CHROMIUM.is_file():
        pytest.fail(f"browser tests need Debian's chromium at {CHROMIUM} (./dev installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # launch() gives every run a fresh temporary user data dir
        found = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield found
        found.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


def _local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or parts.hostname == "127.0.0.1"


@pytest.fixture
def serve_app() -> Iterator[Callable[[Any], str]]:
    """`serve_app(app)` -> base URL; the servers stop after the test's pages are closed."""
    with ExitStack() as stack:
        yield lambda app: stack.enter_context(serve_asgi(app))


@pytest.fixture
def open_page(
    browser: Any, watch: Watch, serve_app: Any, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    # serve_app is set up first, so servers outlive the pages (no refused loads at teardown)
    pages: list[Any] = []
    contexts: list[Any] = []

    def make(context: Any = None) -> Any:
        if context is None:
            context = browser.new_context()
            contexts.append(context)
        page = context.new_page()

        def on_console(message: Any) -> None:
            if message.type == "error":
                watch.add(f"console error: {message.text}")

        def on_dialog(dialog: Any) -> None:
            watch.add(f"dialog ({dialog.type}): {dialog.message}")
            dialog.dismiss()

        def on_route(route: Any) -> None:
            if _local(route.request.url):
                route.continue_()
            else:
                watch.add(f"request to another host: {route.request.url}")
                route.abort()

        page.on("console", on_console)
        page.on("dialog", on_dialog)
        page.on("pageerror", lambda error: watch.add(f"page error: {error}"))
        page.route("**/*", on_route)
        pages.append(page)
        return page

    yield make
    ARTIFACTS.mkdir(exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", request.node.name)
    for n, page in enumerate(pages):
        if not page.is_closed():
            page.screenshot(path=str(ARTIFACTS / f"{name}-{n}.png"), full_page=True)
    for context in contexts:
        context.close()
    unexpected = watch.unexpected()
    assert not unexpected, "the pages did what a page never should:\n" + "\n".join(unexpected)


@contextmanager
def serve_asgi(app: Any) -> Iterator[str]:
    """Run `app` on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def wait_for(check: Callable[[], bool], what: str, seconds: float = 15) -> None:
    """Wait until `check()` holds (a page's effect on the server); AssertionError naming `what`
    after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def loop_videos(page: Any) -> None:
    """Make the page's videos loop. The test clips last half a second: on a loaded machine one
    ends (and a player's label goes back to "play") before a test reads what playing shows."""
    page.evaluate("document.querySelectorAll('video').forEach(v => { v.loop = true; })")


@dataclass(frozen=True)
class Web:
    """A test's app server, page opener and page watch (the fixtures above), as one."""

    serve: Callable[[Any], str]
    open: Callable[..., Any]
    watch: Watch


@pytest.fixture
def web(serve_app: Callable[[Any], str], open_page: Callable[..., Any], watch: Watch) -> Web:
    return Web(serve_app, open_page, watch)
