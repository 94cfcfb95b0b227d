"""Nothing typed is lost, in Debian's Chromium: the real server (`vidbench annotate serve`, its own
process) is killed with SIGKILL mid-edit; the page says the text is not saved and retries, keeps
it in the browser, asks before leaving, and saves it (and the submit made meanwhile) when the
server is back; a tab closed while the server is down offers its text back on the next visit.
A tab closed within the autosave's debounce after another tab saved keeps its text on the
server, offered back in any browser."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

import vidbench
from annotate_support import ADAPTERS, make_project, query, sign_in_page, work_ids
from browser import Watch, Web
from vidbench.annotate.web.app import create_app

pytestmark = pytest.mark.slow
SRC = Path(vidbench.__file__).resolve().parents[1]  # the server runs the code under test


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(project_path: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`vidbench annotate serve` on 127.0.0.1:port until killed (or the block ends)."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "vidbench.cli", "annotate", "serve", str(project_path)]
    server = subprocess.Popen([*command, "--port", str(port)], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the annotation server did not start") from None
                time.sleep(0.1)
        yield server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGKILL)
        server.wait(10)


def _kill(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGKILL)
    server.wait(10)


def _row(project: Any, work_id: int) -> tuple[str, str, int]:
    found = query(project, "SELECT content, status, version FROM work WHERE id = ?", (work_id,))
    return found[0][0], found[0][1], found[0][2]


def _stored(page: Any, work_id: int) -> str | None:
    return page.evaluate(f"() => localStorage.getItem('vidbench:unsaved:{work_id}')")


def _leaving_asks(page: Any) -> bool:
    """Whether the page's beforeunload handler asks before leaving."""
    return bool(
        page.evaluate(
            "() => { const e = new Event('beforeunload', {cancelable: true});"
            " window.dispatchEvent(e); return e.defaultPrevented; }"
        )
    )


def test_a_server_killed_mid_edit_loses_nothing(
    qa_release: Path, tmp_path: Path, open_page: Callable[..., Any], watch: Watch
) -> None:
    # the browser's own lines about the killed server; a clip streaming at the kill is cut short
    watch.allow(
        r"ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_CONTENT_LENGTH_MISMATCH"
        r"|Failed to fetch"
    )
    project = make_project(qa_release, tmp_path)
    mine = work_ids(project, "ann1", "write")[0]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    first = "A red cube"
    whole = "A red cube spins twice to the left, then stops."
    with _server(project.path, port) as server:
        page = open_page()
        sign_in_page(page, base, "ann1")
        page.goto(f"{base}/work/{mine}")
        page.fill("#caption", first)
        expect(page.locator("[data-version]")).to_have_text("1")
        expect(page.locator("[data-saved]")).to_have_attribute("data-save-state", "saved")
        assert not _leaving_asks(page)
        _kill(server)

        page.fill("#caption", whole)
        saved = page.locator("[data-saved]")
        expect(saved).to_have_attribute("data-save-state", "retrying", timeout=10_000)
        expect(saved).to_contain_text("not saved, retrying in")
        assert whole in (_stored(page, mine) or "")
        assert _leaving_asks(page)
        page.click("[data-submit]")  # submitting during the outage is not silent either
        expect(saved).to_contain_text("not submitted, retrying in", timeout=20_000)
        assert _row(project, mine) == (first, "draft", 1)

    with _server(project.path, port) as server:
        expect(page.locator("[data-status]")).to_have_text("submitted", timeout=30_000)
        expect(saved).to_have_attribute("data-save-state", "saved")
        assert _row(project, mine) == (whole, "submitted", 2)
        assert _stored(page, mine) is None and not _leaving_asks(page)

        # the server goes away again and the tab is closed before it is back
        _kill(server)
        later = whole + " It is red all over."
        page.fill("#caption", later)
        expect(saved).to_have_attribute("data-save-state", "retrying", timeout=10_000)
        context = page.context
        page.close()

    with _server(project.path, port):
        again = open_page(context)  # the same browser, later
        again.goto(f"{base}/work/{mine}")
        offer = again.locator("[data-local]")
        expect(offer).to_be_visible()
        expect(offer.locator("[data-local-text]")).to_have_text(later)
        assert again.locator("#caption").input_value() == whole  # the server's, until restored
        offer.locator("[data-local-restore]").click()
        expect(again.locator("[data-version]")).to_have_text("3")
        assert _row(project, mine) == (later, "submitted", 3)
        assert offer.is_hidden() and _stored(again, mine) is None


def test_a_tab_closed_right_after_typing_keeps_its_text_on_a_conflict(
    qa_release: Path,
    tmp_path: Path,
    web: Web,
) -> None:
    web.watch.allow(r"status of 409")
    project = make_project(qa_release, tmp_path)
    mine = work_ids(project, "ann2", "write")[0]
    base = web.serve(create_app(project, ADAPTERS))
    one = web.open()
    sign_in_page(one, base, "ann2")
    two = web.open(one.context)  # a second tab of the same person
    one.goto(f"{base}/work/{mine}")
    two.goto(f"{base}/work/{mine}")
    one.fill("#caption", "Tab one: a cube.")
    expect(one.locator("[data-version]")).to_have_text("1")
    two.fill("#caption", "Tab two: a cube that spins, typed and closed at once.")
    two.close(run_before_unload=True)  # within the debounce: the save goes out as the tab closes
    elsewhere = web.open()  # another browser: nothing in its storage
    sign_in_page(elsewhere, base, "ann2")
    kept = elsewhere.locator("[data-kept]")
    deadline = time.monotonic() + 10
    while True:  # the closed tab's save may still be on its way
        elsewhere.goto(f"{base}/work/{mine}")
        if kept.count() or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    expect(kept).to_have_count(1)
    expect(kept.locator("[data-kept-text]")).to_have_text(
        "Tab two: a cube that spins, typed and closed at once."
    )
    assert _row(project, mine) == ("Tab one: a cube.", "draft", 1)  # nothing overwritten
    kept.locator("[data-kept-restore]").click()
    expect(elsewhere.locator("[data-version]")).to_have_text("2")
    assert _row(project, mine)[0] == "Tab two: a cube that spins, typed and closed at once."
    elsewhere.reload()
    expect(elsewhere.locator("[data-kept]")).to_have_count(0)
