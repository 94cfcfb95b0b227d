"""A store file that is damaged (cut short, overwritten, not a database) is an error naming the
file and what to do, wherever a query meets the damage, not a traceback; `--fresh` starts over."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vidbench.cli import main
from vidbench.core.errors import EXIT_ERROR, EXIT_OK


def _run(*argv: str) -> int:
    return main(["--no-progress", "run", *argv])


@pytest.mark.parametrize("where", ["header", "page"])
def test_a_damaged_store_is_named_not_a_traceback(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    out = tmp_path / "r"
    argv = ("4dbench-qa", "--data", str(qa_release), "--model", "random", "--out", str(out))
    assert _run(*argv) == EXIT_OK
    store = out / "store.sqlite"
    damaged = bytearray(store.read_bytes())
    # the file's header, or the header of every page after the first (the tables' pages)
    for at in [0] if where == "header" else range(4096, len(damaged), 4096):
        damaged[at : at + 300] = b"\xff" * 300
    store.write_bytes(bytes(damaged))
    kept = tmp_path / "kept.sqlite"
    shutil.copy(store, kept)
    capsys.readouterr()
    assert _run(*argv) == EXIT_ERROR
    said = " ".join(capsys.readouterr().err.split())
    assert f"{store} is damaged or not a vidbench store" in said and "--fresh" in said
    assert store.read_bytes() == kept.read_bytes()  # left as it was, for a copy to be taken
    assert _run(*argv, "--fresh") == EXIT_OK


def test_a_store_that_cannot_be_opened_is_named_not_a_traceback(
    qa_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r" / "store.sqlite").mkdir(parents=True)  # a folder in its place
    argv = ("4dbench-qa", "--data", str(qa_release), "--model", "random")
    assert _run(*argv, "--out", str(tmp_path / "r")) == EXIT_ERROR
    said = " ".join(capsys.readouterr().err.split())
    assert f"{tmp_path / 'r' / 'store.sqlite'}: cannot be opened as the store" in said
