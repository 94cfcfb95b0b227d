"""The `hf:` families beyond Qwen2-VL and LLaVA-OneVision, each a tiny random checkpoint run
through `vidbench run` on two 4D-Bench questions: batched == unbatched, the frames reaching the
model as the family takes them (images, or clips of its video input with its clip length), and
the frame input in the run's model identity."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

import video_stand_in
from conftest import make_qa_dataset, vary_question_lengths
from tiny_families import build
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.files import read_jsonl
from vidbench.media.frames import load_frames
from vidbench.media.images import decode_image
from vidbench.models import hf_runtime
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from video_stand_in import use_stand_in


@dataclass(frozen=True)
class Case:
    family: str  # tiny_families builder
    task: str
    frame_input: str
    video_frames: int | None
    placeholder: str  # the token the processor expands a frame into
    placeholders: int  # how many per prompt
    options: dict[str, str] = field(default_factory=dict)


CASES = {
    # Video-LLaVA: one clip of 8 frames, 4 patches + CLS each
    "video-llava": Case("video-llava", "4dbench-qa:views-1+frames-8", "video", 8, "<video>", 40),
    # InstructBLIP-Video: one clip of 4 frames, 2 Q-Former queries each
    "instructblip-video": Case(
        "instructblip-video", "4dbench-qa:views-1+frames-4", "video", 4, "<video>", 8
    ),
    # InternVL: 18 images of one tile, 1 token each; or one clip of 18 frames (`Frame1: ...`)
    "internvl": Case("internvl", "4dbench-qa", "images", None, "<IMG_CONTEXT>", 18),
    "internvl-video": Case(
        "internvl", "4dbench-qa", "video", None, "<IMG_CONTEXT>", 18, {"frame_input": "video"}
    ),
    # InstructBLIP and BLIP-2: one image (a frame here; a grid in AutoEval-Video), 2 queries
    "instructblip": Case(
        "instructblip", "4dbench-qa:views-1+frames-1", "images", None, "<image>", 2
    ),
    "blip-2": Case("blip-2", "4dbench-qa:views-1+frames-1", "images", None, "<image>", 2),
    # LLaVA-1.5: one image (a grid in AutoEval-Video), 4 patches
    "llava": Case("llava", "4dbench-qa:views-1+frames-1", "images", None, "<image>", 4),
    # Gemma 3: 18 images, 4 soft tokens each
    "gemma-3": Case("gemma-3", "4dbench-qa", "images", None, "<image_soft_token>", 72),
    # Idefics3: 18 images, 1 token each (no splitting)
    "idefics3": Case("idefics3", "4dbench-qa", "images", None, "<image>", 18),
    # SmolVLM(2): the same through SmolVLM's processor (it imports num2words: the hf extra
    # installs it). Its video input is not tested: SmolVLM's video processor (frame sampling
    # with timestamps) needs torchvision, which has no build for this CPU torch.
    "smolvlm": Case("smolvlm", "4dbench-qa", "images", None, "<image>", 18),
}


@pytest.fixture(scope="module")
def qa_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return vary_question_lengths(
        make_qa_dataset(tmp_path_factory.mktemp("qa"), n_objects=1, frames=12), sentences=8
    )


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("families")
    return {name: build(name, root / name) for name in {c.family for c in CASES.values()}}


class EncodeSpy:
    """What the processor made of each batch: placeholder tokens per prompt, and the frames."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[tuple[Any, Any]] = []
        original = hf_runtime.encode_batch

        def spy(loaded: Any, requests: Any, processor: Any = None) -> Any:
            inputs = original(loaded, requests, processor)
            self.batches.append((inputs, processor or loaded.processor))
            return inputs

        monkeypatch.setattr(hf_runtime, "encode_batch", spy)

    def placeholders(self, token: str) -> list[int]:
        counts = []
        for inputs, processor in self.batches:
            token_id = getattr(processor, "tokenizer", processor).convert_tokens_to_ids(token)
            counts += (inputs["input_ids"] == token_id).sum(dim=1).tolist()
        return counts


def run_family(case: Case, model_dir: Path, data: Path, out: Path, batch_size: int) -> Any:
    config = RunConfig(
        task=case.task,
        data=str(data),
        model=f"hf:{model_dir}",
        out=str(out),
        concurrency=2,
        generation={"max_tokens": 6},
        model_options={"device": "cpu", "batch_size": str(batch_size), **case.options},
        cache_dir=str(out / "frames"),
        progress=False,
        limit=2,
    )
    run = Run(config, console=Console(file=io.StringIO()))
    run.run()
    return run


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_family_end_to_end_batched_equals_unbatched(
    name: str,
    checkpoints: dict[str, Path],
    qa_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = CASES[name]
    if case.frame_input == "video":
        use_stand_in(monkeypatch)  # no torchvision here: see video_stand_in.py
    outputs = {}
    for batch_size in (1, 2):
        spy = EncodeSpy(monkeypatch)
        out = tmp_path / f"batch{batch_size}"
        run_family(case, checkpoints[case.family], qa_data, out, batch_size)
        records = list(read_jsonl(out / "samples.jsonl"))
        assert [r["status"] for r in records] == ["ok", "ok"], records
        assert spy.placeholders(case.placeholder) == [case.placeholders] * 2
        assert max(inputs["input_ids"].shape[0] for inputs, _ in spy.batches) == batch_size
        results = json.loads((out / "results.json").read_text())
        identity = results["model_identity"]
        assert identity["frame_input"] == case.frame_input
        assert identity["video_frames"] == case.video_frames
        assert identity["trust_remote_code"] is False
        outputs[batch_size] = {r["id"]: r["raw_output"] for r in records}
    assert outputs[1] == outputs[2]
    assert all(isinstance(text, str) and text for text in outputs[1].values())
    assert len(set(outputs[1].values())) == 2  # the random model's answer depends on its input


@pytest.mark.slow
def test_clips_reach_the_video_input_in_frame_order(
    checkpoints: dict[str, Path], qa_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Video-LLaVA's processor gets one clip per question: the 8 frames of the FrameSpec."""
    use_stand_in(monkeypatch)
    seen: list[Any] = []
    original = hf_runtime.clip_array
    monkeypatch.setattr(
        hf_runtime, "clip_array", lambda clip: seen.append(original(clip)) or seen[-1]
    )
    case = CASES["video-llava"]
    run = run_family(case, checkpoints["video-llava"], qa_data, tmp_path / "order", 2)
    assert len(seen) == 2
    assert video_stand_in.CALLS[-1]["do_sample_frames"] is False  # the frames are the spec's
    for sample, clip in zip(run.samples, seen, strict=True):
        frames = load_frames(sample.media, run.task.frame_spec, None)
        want = np.stack([np.asarray(decode_image(f.image.data)) for f in frames])
        assert clip.shape == (8, *want.shape[1:]) and np.array_equal(clip, want)


@pytest.mark.slow
def test_a_clip_of_another_length_is_refused_by_name(
    checkpoints: dict[str, Path],
    qa_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Video-LLaVA takes 8 frames per clip: 4D-Bench's 18 frames are an error naming the fix,
    recorded per question (never resampled), and the run reports them as rejected: a rerun as
    it is gets the same, so the run says to change the frames, not to run it again."""
    use_stand_in(monkeypatch)
    out = tmp_path / "eighteen"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(qa_data), "--limit", "2"]
    argv += ["--model", f"hf:{checkpoints['video-llava']}", "--out", str(out)]
    argv += ["--model-opt", "device=cpu", "--max-tokens", "4"]
    capsys.readouterr()
    assert main(argv) == 3
    said = " ".join(capsys.readouterr().err.split())
    assert "run the same command again" not in said and "change first the frames" in said
    records = list(read_jsonl(out / "samples.jsonl"))
    assert [r["status"] for r in records] == ["rejected", "rejected"]
    assert "takes 8 frames per clip; this request has 18" in records[0]["error"]
    assert "frames-8" in records[0]["error"]
    assert json.loads((out / "results.json").read_text())["errors"] == 2


def write_config(path: Path, model_type: str, **fields: Any) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({"model_type": model_type, **fields}))
    return path


@pytest.mark.parametrize(
    ("model_type", "architecture", "message"),
    [
        ("llava", "LlavaQwenForCausalLM", "which LlavaForConditionalGeneration does not load"),
        ("qwen2", "NoSuchVisionModel", "which transformers does not have"),
    ],
)
def test_a_checkpoint_made_for_other_code_stops_early(
    tmp_path: Path, model_type: str, architecture: str, message: str
) -> None:
    """lmms-lab's LLaVA-Video says model_type "llava" but is the LLaVA-NeXT repository's
    LlavaQwenForCausalLM: loading it into Llava would leave most weights random."""
    ckpt = write_config(tmp_path / "ckpt", model_type, architectures=[architecture])
    with pytest.raises(ConfigError, match=f"architecture is {architecture}, {message}"):
        load_model(f"hf:{ckpt}")


@pytest.mark.parametrize(
    ("model_type", "extra", "message"),
    [
        ("gemma3", {"frame_input": "video"}, "gemma-3 takes frames as images only, not video"),
        ("instructblipvideo", {"frame_input": "images"}, "as video only, not images"),
        ("qwen2_vl", {"frame_input": "clips"}, "frame_input='clips'; use images or video"),
        ("qwen2_vl", {"trust_remote_code": "maybe"}, "trust_remote_code='maybe'"),
    ],
)
def test_frame_input_a_family_does_not_take_stops_early(
    tmp_path: Path, model_type: str, extra: dict[str, str], message: str
) -> None:
    ckpt = write_config(tmp_path / model_type, model_type)
    with pytest.raises(ConfigError, match=message):
        load_model(f"hf:{ckpt}", ModelOptions(extra=extra))


def test_each_family_records_its_default_frame_input(tmp_path: Path) -> None:
    expected = {
        "qwen2_vl": ("images", None),
        "llava_onevision": ("images", None),
        "llava_next_video": ("video", None),
        "video_llava": ("video", 8),
        "instructblipvideo": ("video", 4),
        "internvl": ("images", None),
        "gemma3": ("images", None),
        "idefics3": ("images", None),
        "smolvlm": ("images", None),
        "instructblip": ("images", None),
        "blip-2": ("images", None),
        "llava": ("images", None),
    }
    for model_type, (kind, frames) in expected.items():
        model = load_model(f"hf:{write_config(tmp_path / model_type, model_type)}")
        identity = model.identity()
        assert (identity["frame_input"], identity["video_frames"]) == (kind, frames), model_type


@pytest.mark.slow
@pytest.mark.skipif(
    __import__("importlib").util.find_spec("torchvision") is not None,
    reason="torchvision is installed here: the video processor loads",
)
def test_video_input_without_torchvision_names_the_way_out(tmp_path: Path) -> None:
    checkpoint = build("video-llava", tmp_path / "video-llava")
    model = load_model(f"hf:{checkpoint}", ModelOptions(extra={"device": "cpu"}))
    with pytest.raises(ConfigError, match=r"need torchvision.*frame_input=images"):
        model.load()  # type: ignore[attr-defined]
