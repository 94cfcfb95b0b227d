"""`vidbench view --serve`: the same static report over HTTP on 127.0.0.1, for runs too big to
copy (starlette's StaticFiles on uvicorn; the `view` extra). Video links under videos/ point
outside the report folder, so symlinks are followed; nothing else is served."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.extras import require

HOST = "127.0.0.1"


def report_app(folder: Path) -> Any:
    """An ASGI app serving the report folder (index.html at /)."""
    require("vidbench view --serve", ["starlette"], "view")
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    if not (folder / "index.html").is_file():
        raise ConfigError(f"{folder}: no report here (index.html missing); build it first")
    files = StaticFiles(directory=folder, html=True, follow_symlink=True)
    # mounted in an app, so a path not found is a 404 (StaticFiles alone raises it as a 500)
    return Starlette(routes=[Mount("/", app=files)])


def bind(port: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1: the port asked for, or a free one."""
    sock = socket.socket()
    try:
        sock.bind((HOST, port or 0))
    except OSError as e:
        sock.close()
        raise ConfigError(f"--port {port}: cannot listen on {HOST}:{port} ({e})") from e
    return sock


def serve(folder: Path, sock: socket.socket) -> None:
    """Serve until interrupted."""
    require("vidbench view --serve", ["uvicorn"], "view")
    import uvicorn

    app = report_app(folder)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.run(sockets=[sock])
