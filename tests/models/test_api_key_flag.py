"""`vidbench run --api-key-env NAME`: the key comes from that variable, never the command line."""

from __future__ import annotations

import json
from pathlib import Path

from vidbench.cli import main
from vidbench.testing import ChatServer

KEY = "sk-test-flag-0123456789"


def _run(release: Path, out: Path, server: ChatServer, *extra: str) -> int:
    return main(
        [
            "--no-progress",
            "run",
            "4dbench-qa",
            "--data",
            str(release),
            "--limit",
            "3",
            "--model",
            f"openai-compat:{server.base_url}#m",
            "--out",
            str(out),
            "--cache-dir",
            str(out / "cache"),
            "--model-opt",
            "backoff=0.01",
            *extra,
        ]
    )


def test_key_from_the_named_variable(qa_release: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("MY_GATEWAY_KEY", KEY)
    with ChatServer(api_key=KEY) as server:
        assert _run(qa_release, tmp_path / "without", server) == 2  # no key: refused at start
        assert "127.0.0.1" in capsys.readouterr().err
        assert _run(qa_release, tmp_path / "with", server, "--api-key-env", "MY_GATEWAY_KEY") == 0
    results = json.loads((tmp_path / "with" / "results.json").read_text())
    assert results["n_scored"] == 3
    for path in (tmp_path / "with").rglob("*"):
        if path.is_file() and "cache" not in path.parts:
            assert KEY.encode() not in path.read_bytes(), path


def test_unset_variable_is_a_clear_error(qa_release: Path, tmp_path: Path, capsys) -> None:
    with ChatServer() as server:
        assert _run(qa_release, tmp_path / "r", server, "--api-key-env", "NOT_SET_ANYWHERE") == 2
    assert "api_key_env=NOT_SET_ANYWHERE names an environment variable that is not set" in (
        capsys.readouterr().err.replace("\n", " ")
    )
