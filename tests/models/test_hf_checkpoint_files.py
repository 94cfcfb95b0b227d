"""A checkpoint folder as users have them: changed in place, missing files, corrupt shards, no
chat template, prompts longer than the model's context. Tiny real models on CPU."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_qa_dataset
from tiny_models import tiny_qwen2_vl
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.files import read_jsonl
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import GenerationConfig, Request, Response
from vidbench.models.hf_checkpoint import decoder_only
from vidbench.models.registry import ModelOptions, load_model


@pytest.fixture(scope="module")
def qa_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_qa_dataset(tmp_path_factory.mktemp("qa"), n_objects=1, frames=12)


def run_cli(model: Path, data: Path, out: Path, *extra: str) -> int:
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(data), "--out", str(out)]
    argv += ["--model", f"hf:{model}", "--limit", "2", "--max-tokens", "4"]
    return main([*argv, "--model-opt", "device=cpu", *extra])


def said(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def answers(out: Path) -> dict[str, Any]:
    return {r["id"]: r["raw_output"] for r in read_jsonl(out / "samples.jsonl")}


@pytest.mark.slow
def test_weights_changed_in_place_are_asked_again(
    qa_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same folder, new weights (a fine-tune saved over the old one): the stored answers are
    the old model's and must not be reused."""
    model, out = tiny_qwen2_vl(tmp_path / "ckpt", seed=0), tmp_path / "out"
    assert run_cli(model, qa_data, out) == 0
    first = answers(out)
    assert run_cli(model, qa_data, out) == 0  # unchanged: all reused
    assert "infer: 0 answered, 2 reused" in said(capsys)
    tiny_qwen2_vl(model, seed=1)
    assert run_cli(model, qa_data, out) == 0
    assert "infer: 2 answered, 0 reused" in said(capsys)
    assert answers(out) != first
    identity = json.loads((out / "results.json").read_text())["model_identity"]
    assert len(identity["weights"]) == 16


def test_a_hub_id_is_its_cached_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub id names whatever revision the cache (or the hub) has now: its answers are keyed
    by the snapshot's commit, so a newer revision is asked again."""
    from huggingface_hub import constants

    repo = tmp_path / "hub" / "models--tiny--qwen"
    commit = "0123456789abcdef0123456789abcdef01234567"
    tiny_qwen2_vl(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model("hf:tiny/qwen", ModelOptions(extra={"device": "cpu"}))
    assert model.identity()["weights"] == commit


def test_no_chat_template_stops_the_run_before_any_request(
    qa_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: every request an error, and 'run the same command again to retry' (it never helps)."""
    model = tiny_qwen2_vl(tmp_path / "ckpt")
    (model / "chat_template.jinja").unlink()
    out = tmp_path / "out"
    assert run_cli(model, qa_data, out) == 2
    assert f"{model} has no chat template, and qwen2-vl prompts are written" in said(capsys)
    assert not (out / "samples.jsonl").exists()


def ask(model: Any, *texts: str, max_tokens: int) -> list[Response]:
    settings = GenerationConfig(max_tokens=max_tokens)
    requests = [
        Request(f"k{i}", f"s{i}", (Message("user", (TextPart(text),)),), settings)
        for i, text in enumerate(texts)
    ]
    return asyncio.run(model.generate(requests))


def test_a_prompt_longer_than_the_context_is_refused(tmp_path: Path) -> None:
    """Was: answered 'ok' from positions the model never learned (or an IndexError for learned
    position embeddings). Now refused, naming the sizes; the prompt that fits is answered, its
    answer ending where the context does."""
    model_dir = tiny_qwen2_vl(tmp_path / "ckpt")
    config = json.loads((model_dir / "config.json").read_text())
    config["text_config"]["max_position_embeddings"] = 64
    (model_dir / "config.json").write_text(json.dumps(config))
    model = load_model(f"hf:{model_dir}", ModelOptions(extra={"device": "cpu", "batch_size": "2"}))
    short, long = ask(model, "Hi?", "Why? " * 20, max_tokens=60)
    assert long.status == "rejected"
    assert "the prompt is 1" in long.error and "the model's context holds 64" in long.error
    assert short.ok and short.truncated
    assert short.usage.input_tokens + short.usage.output_tokens == 64


def test_a_text_only_model_is_named_before_anything_loads(tmp_path: Path) -> None:
    """Was: the weights' load failed with transformers' list of a hundred config classes."""
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]})
    )
    with pytest.raises(ConfigError, match="model type 'qwen2' is not an image-text-to-text"):
        load_model(f"blind:hf:{tmp_path}")


def test_the_weights_key_is_the_folders_own_files(tmp_path: Path) -> None:
    """Stable for an unchanged folder, whatever is written into its subfolders (a trainer's
    next checkpoint-N/); another key once a file of its own is written again."""
    model_dir = tiny_qwen2_vl(tmp_path / "ckpt")

    def weights() -> Any:
        return load_model(f"hf:{model_dir}").identity()["weights"]

    first = weights()
    (model_dir / "checkpoint-500").mkdir()
    (model_dir / "checkpoint-500" / "model.safetensors").write_bytes(b"later")
    assert weights() == first
    config = model_dir / "generation_config.json"
    config.write_text(config.read_text())  # the same bytes, written again: new time
    assert weights() != first


def test_a_request_the_processor_fails_on_fails_alone(tmp_path: Path) -> None:
    """Was: Qwen2-VL's processor refused one image (aspect ratio over 200) and the whole batch
    was recorded with that error (a rerun batched them together again)."""
    import numpy as np

    from vidbench.core.messages import ImagePart
    from vidbench.media.images import encode_image

    model_dir = tiny_qwen2_vl(tmp_path / "ckpt")
    model = load_model(f"hf:{model_dir}", ModelOptions(extra={"device": "cpu", "batch_size": "4"}))

    def with_image(key: str, height: int, width: int) -> Request:
        pixels = encode_image(np.full((height, width, 3), 100, np.uint8))
        parts = (ImagePart(pixels, "image/png", "frame"), TextPart("Which?"))
        return Request(key, key, (Message("user", parts),), GenerationConfig(max_tokens=3))

    requests = [with_image("a", 32, 32), with_image("thin", 2, 900), with_image("b", 40, 40)]
    a, thin, b = asyncio.run(model.generate(requests))
    assert a.ok and b.ok
    assert thin.status == "error" and "aspect ratio must be smaller than 200" in thin.error


def test_an_adapter_folder_is_named_as_such(tmp_path: Path) -> None:
    """Was: 'has no config.json; is it a model checkpoint?' for a LoRA adapter's folder."""
    (tmp_path / "adapter_config.json").write_text('{"peft_type": "LORA"}')
    with pytest.raises(ConfigError, match="is a PEFT adapter .* merge it into its base model"):
        load_model(f"hf:{tmp_path}")


def test_a_prompt_near_the_context_end_does_not_shorten_its_batchs_answers(
    tmp_path: Path,
) -> None:
    """Was: one max_new_tokens for the batch, the longest prompt's room, so a short question's
    answer ended early (marked truncated) when a long one shared its batch, and had another
    length when asked with other questions. Now the long prompt is generated alone."""
    model_dir = tiny_qwen2_vl(tmp_path / "ckpt")
    config = json.loads((model_dir / "config.json").read_text())
    config["text_config"]["max_position_embeddings"] = 128
    (model_dir / "config.json").write_text(json.dumps(config))
    batched = load_model(
        f"hf:{model_dir}", ModelOptions(extra={"device": "cpu", "batch_size": "3"})
    )
    short, near_end, other = ask(batched, "Hi?", "Why? " * 12, "Who?", max_tokens=30)
    alone = load_model(f"hf:{model_dir}", ModelOptions(extra={"device": "cpu"}))
    (short_alone,) = ask(alone, "Hi?", max_tokens=30)
    assert short.ok and other.ok and near_end.ok
    assert short.usage.output_tokens == other.usage.output_tokens == 30
    assert short.text == short_alone.text
    assert near_end.truncated and near_end.usage.input_tokens + near_end.usage.output_tokens == 128


def test_a_file_of_the_checkpoint_given_for_its_folder_is_named(tmp_path: Path) -> None:
    """Was: 'no model directory at .../config.json', of a file that is there."""
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_vl"}))
    with pytest.raises(ConfigError) as raised:
        load_model(f"hf:{tmp_path / 'config.json'}")
    said = str(raised.value)
    assert "config.json is a file; give the folder that holds the checkpoint" in said
    assert f"({tmp_path} holds a config.json)" in said


def test_right_padding_of_a_decoder_only_batch_is_refused(tmp_path: Path) -> None:
    """Was: accepted, and a batch's shorter prompts were answered from after their padding
    (other answers than batch_size=1 gives, with only transformers' warning on the terminal)."""
    tiny = tiny_qwen2_vl(tmp_path / "ckpt")
    right = {"device": "cpu", "padding_side": "right"}
    with pytest.raises(ConfigError, match="padding_side=right with batch_size=2: its language"):
        load_model(f"hf:{tiny}", ModelOptions(extra={**right, "batch_size": "2"}))
    load_model(f"hf:{tiny}", ModelOptions(extra=right))  # no padding in a batch of one
    t5 = tmp_path / "instructblip-flan-t5"  # an encoder-decoder: right padding is its own
    t5.mkdir()
    (t5 / "config.json").write_text(
        json.dumps({"model_type": "instructblip", "text_config": {"model_type": "t5"}})
    )
    assert not decoder_only("hf:t5", str(t5)) and decoder_only("hf:tiny", str(tiny))
