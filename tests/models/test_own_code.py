"""Checkpoints that ship their own code: refused by default with a message naming the option,
run by `hf:` with trust_remote_code=true when they follow the processor + generate conventions,
and, when they have only their own chat API, by the `python:` worked example of
docs/reproducing-papers.md (docs/examples/own_chat_model.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_qa_dataset, vary_question_lengths
from tiny_own_code import tiny_chat_vl, tiny_own_vl
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.files import read_jsonl
from vidbench.models.registry import ModelOptions, load_model

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture(scope="module")
def qa_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return vary_question_lengths(
        make_qa_dataset(tmp_path_factory.mktemp("qa"), n_objects=1, frames=12)
    )


@pytest.fixture(scope="module")
def own_vl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_own_vl(tmp_path_factory.mktemp("own-vl"))


@pytest.fixture(scope="module")
def chat_vl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_chat_vl(tmp_path_factory.mktemp("chat-vl"))


def run(argv: list[str], qa_data: Path, model: str, out: Path, *options: str) -> int:
    base = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_data), "--limit", "2"]
    base += ["--model", model, "--out", str(out), "--max-tokens", "5"]
    for option in options:
        base += ["--model-opt", option]
    return main(base + argv)


def test_own_code_is_refused_without_the_option(own_vl: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_model(f"hf:{own_vl}")
    message = str(error.value)
    assert "ships its own code (configuration_tiny_own.py, modeling_tiny_own.py)" in message
    assert "'tiny_own_vl'" in message
    assert message.endswith("run with --model-opt trust_remote_code=true")


def test_unknown_type_without_code_is_named(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "no_such_vlm"}))
    with pytest.raises(ConfigError, match="does not know model type 'no_such_vlm'"):
        load_model(f"hf:{tmp_path}", ModelOptions(extra={"trust_remote_code": "true"}))


@pytest.mark.slow
def test_own_code_runs_with_trust_remote_code(own_vl: Path, qa_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "own"
    options = ("device=cpu", "batch_size=2", "trust_remote_code=true")
    assert run([], qa_data, f"hf:{own_vl}", out, *options) == 0
    records = list(read_jsonl(out / "samples.jsonl"))
    assert [r["status"] for r in records] == ["ok", "ok"], records
    identity = json.loads((out / "results.json").read_text())["model_identity"]
    assert identity["trust_remote_code"] is True and identity["frame_input"] == "images"


def test_own_chat_api_through_hf_names_the_python_route(
    chat_vl: Path, qa_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("device=cpu", "trust_remote_code=true")
    assert run([], qa_data, f"hf:{chat_vl}", tmp_path / "hf", *options) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert "registers no generating model" in error and "python: model" in error


@pytest.mark.slow
def test_python_worked_example_runs_the_own_chat_api(
    chat_vl: Path, qa_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docs' worked example, as the docs run it: PYTHONPATH=docs/examples, the checkpoint
    in OWN_CHAT_CHECKPOINT, `--model python:own_chat_model:OwnChatModel`."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("OWN_CHAT_CHECKPOINT", str(chat_vl))
    monkeypatch.setenv("OWN_CHAT_DEVICE", "cpu")
    out = tmp_path / "python"
    assert run([], qa_data, "python:own_chat_model:OwnChatModel", out) == 0
    records = list(read_jsonl(out / "samples.jsonl"))
    assert [r["status"] for r in records] == ["ok", "ok"], records
    assert all(r["raw_output"] for r in records)
    assert len({r["raw_output"] for r in records}) == 2  # its answer depends on the question
    identity = json.loads((out / "results.json").read_text())["model_identity"]
    assert identity["checkpoint"] == str(chat_vl) and identity["trust_remote_code"] is True
    # a second run asks nothing: every answer is stored under that identity
    assert run([], qa_data, "python:own_chat_model:OwnChatModel", out) == 0
    usage = json.loads((out / "results.json").read_text())["usage"]
    assert usage["requests"] == 2
