"""Bodies are not read before the session is checked, and each route has a body limit: against the
real server on 127.0.0.1, raw requests announce (or stream) hundreds of MB while the test sends a
few, reusing one small chunk, and the answer must come before the body does."""

from __future__ import annotations

import re
import select
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from annotate_support import ADAPTERS, PASSWORD, make_project, work_ids
from browser import serve_asgi
from vidbench.annotate.web.app import create_app
from vidbench.annotate.web.limits import DEFAULT, UPLOAD

pytestmark = pytest.mark.slow
CHUNK = b"a" * 65536
MIB = 1 << 20


@pytest.fixture(scope="module")
def served(qa_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    project = make_project(qa_release, tmp_path_factory.mktemp("annotate_limits"))
    with serve_asgi(create_app(project, ADAPTERS)) as base:
        yield project, base


def _signed_in(base: str, name: str) -> tuple[str, str]:
    """(Cookie header, CSRF token) of a fresh session."""
    with requests.Session() as client:
        page = client.get(f"{base}/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        form = {"name": name, "password": PASSWORD, "csrf": token}
        assert client.post(f"{base}/login", data=form, allow_redirects=False).status_code == 303
        home = client.get(f"{base}/").text
        csrf = re.search(r'<meta name="csrf" content="([^"]+)"', home).group(1)
        return f"vb_session={client.cookies['vb_session']}", csrf


def _send(base: str, head: str, body: Iterator[bytes]) -> tuple[int, int]:
    """Send the request head, then body chunks until the server answers (or stops reading);
    (status, body bytes sent)."""
    parts = urlsplit(base)
    sent = 0
    with socket.create_connection((parts.hostname, parts.port), timeout=20) as sock:
        sock.sendall(head.encode("latin-1"))
        for chunk in body:
            if select.select([sock], [], [], 0)[0]:
                break  # the answer (or the close) is there
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        answer = sock.recv(4096)  # waits (up to the timeout) for an answer
    return int(answer.split(b" ", 2)[1]), sent


def _chunks(total: int) -> Iterator[bytes]:
    for _ in range(total // len(CHUNK)):
        yield CHUNK


def _chunked(total: int, prefix: bytes = b"") -> Iterator[bytes]:
    """Transfer-Encoding: chunked framing of `prefix` then `total` bytes (never finished)."""
    if prefix:
        yield b"%x\r\n%s\r\n" % (len(prefix), prefix)
    for chunk in _chunks(total):
        yield b"%x\r\n%s\r\n" % (len(chunk), chunk)


def _head(path: str, length: int | None, extra: str = "") -> str:
    size = f"Content-Length: {length}\r\n" if length is not None else ""
    size = size or "Transfer-Encoding: chunked\r\n"
    return f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{size}{extra}\r\n"


def test_an_unauthenticated_body_is_not_read(served: tuple) -> None:
    _, base = served
    json_head = _head("/api/work/1", 200_000_000, "Content-Type: application/json\r\n")
    status, sent = _send(base, json_head, _chunks(200_000_000))
    assert status == 401 and sent < 4 * MIB, (status, sent)
    form = "Content-Type: multipart/form-data; boundary=xyz\r\n"
    status, sent = _send(base, _head("/api/admin/import", 500_000_000, form), _chunks(500_000_000))
    assert status == 401 and sent < 4 * MIB, (status, sent)
    # a session without its CSRF token is refused before the body as well
    cookie, _ = _signed_in(base, "ada")
    status, sent = _send(
        base,
        _head("/api/admin/import", 500_000_000, form + f"Cookie: {cookie}\r\n"),
        _chunks(500_000_000),
    )
    assert status == 403 and sent < 4 * MIB, (status, sent)


def test_a_signed_in_body_over_its_route_limit_is_cut_off(served: tuple) -> None:
    project, base = served
    cookie, csrf = _signed_in(base, "ann1")
    auth = f"Cookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\nContent-Type: application/json\r\n"
    mine = work_ids(project, "ann1", "write")[0]
    status, sent = _send(base, _head(f"/api/work/{mine}", 200_000_000, auth), _chunks(200_000_000))
    assert status == 413 and sent < 4 * MIB, (status, sent)
    status, sent = _send(base, _head(f"/api/work/{mine}", None, auth), _chunked(8 * DEFAULT))
    assert status == 413 and sent < DEFAULT + 4 * MIB, (status, sent)

    cookie, csrf = _signed_in(base, "ada")
    form = (
        f"Cookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
        "Content-Type: multipart/form-data; boundary=xyz\r\n"
    )
    part = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    status, sent = _send(base, _head("/api/admin/import", None, form), _chunked(2 * UPLOAD, part))
    assert status == 413 and UPLOAD < sent < UPLOAD + 8 * MIB, (status, sent)
    # under the limit, a large upload is read and imported (every line named as not a candidate)
    with requests.Session() as client:
        client.headers.update({"Cookie": cookie, "X-CSRF-Token": csrf})
        lines = b'{"id": "x"}\n' * (3 * MIB // 12)
        done = client.post(f"{base}/api/admin/import", files={"file": ("many.jsonl", lines)})
    assert done.status_code == 200 and len(done.json()["problems"]) == 3 * MIB // 12
    assert not list((project.path / "uploads").glob("*big*"))  # nothing of it kept
