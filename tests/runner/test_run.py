"""`vidbench run 4dbench-qa`: prompts, variants, the store, stages, results and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SUBTASK_SUFFIXES, solid_frames
from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.core.messages import ImagePart, TextPart
from vidbench.media.encode import write_mp4
from vidbench.registry import get_task
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store

TABLE_COLUMNS = [
    "Object Counting",
    "Temporal Relationship",
    "Action",
    "Spatial Relationship",
    "Appearance",
    "Overall",
]


def run(*args: str) -> int:
    return main(["--no-progress", "run", *args])


def test_results_files_and_fields(qa_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert (
        run("4dbench-qa", "--data", str(qa_release), "--model", "random", "--out", str(out), *cache)
        == 0
    )
    results = json.loads((out / "results.json").read_text())
    assert results["task"] == "4dbench-qa" and results["model"] == "random"
    assert results["protocol"] == "official"
    assert results["frame_spec"]["views"] == [1, 8, 16] and results["frame_spec"]["frames"] == 6
    assert results["n"] == 20 and results["errors"] == 0 and results["unparsed"] == 0
    assert list(results["columns"]) == TABLE_COLUMNS
    assert list(results["ci95"]) == TABLE_COLUMNS
    assert all(lo <= results["columns"][c] <= hi for c, (lo, hi) in results["ci95"].items())
    assert results["column_n"]["Overall"] == 20 and results["column_n"]["Action"] == 4
    assert results["versions"]["av"] and results["versions"]["python"]
    assert "git_commit" in results
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 20
    first = records[0]
    assert {"prompt_hash", "frames", "raw_output", "parsed", "outcome", "groups"} <= set(first)
    assert [(f["view"], f["index"]) for f in first["frames"][:7]] == [
        (1, 0),
        (1, 2),
        (1, 4),
        (1, 6),
        (1, 8),
        (1, 10),
        (8, 0),
    ]
    correct = sum(r["outcome"]["kind"] == "correct" for r in records)
    assert results["columns"]["Overall"] == pytest.approx(100 * correct / 20)
    table = (out / "table.md").read_text()
    assert "| Model | Object Counting | Temporal Relationship |" in table
    assert (out / "table.csv").read_text().startswith("Model,Object Counting,")


def test_official_prompt_and_images_first(qa_release: Path) -> None:
    task = get_task("4dbench-qa")
    sample = fourd_bench.load_qa(qa_release).items[0]
    fake_frames = _fake_frames(task.frame_spec.views, task.frame_spec.frames)
    [message] = task.build_messages(sample, fake_frames)
    parts = message.content
    assert all(isinstance(p, ImagePart) for p in parts[:18]) and isinstance(parts[18], TextPart)
    assert parts[18].text == (
        "You are an excellent video analyst. I provide you 18 frames with every six images "
        "uniformly sampled from one video, each video captured from a different angle and a "
        "question and four choices. Carefully watch the provided videos and pay attention to "
        "every detail. Based on your observations, select the best option that accurately "
        "addresses the question. Here is the question and choices: "
        "{'Question': 'Question 0 about object 0?', 'Options': ['(A) option A', "
        "'(B) option B', '(C) option C', '(D) option D']}. You must return only the option "
        "identifier (e.g., '(A)') without any additional text, do not add any additional "
        "analysis, just return the correct option identifier."
    )


def _fake_frames(views, per_view):
    from vidbench.media.frame import Frame

    return [
        Frame(v, i, i / 10, ImagePart(b"x", label=f"view {v}, frame {i}"))
        for v in views
        for i in range(per_view)
    ]


@pytest.mark.parametrize(
    ("variant", "n_images", "phrase"),
    [
        ("4dbench-qa:views-1", 6, "I provide you 6 frames with every six images"),
        ("4dbench-qa:views-6", 36, "I provide you 36 frames with every six images"),
        ("4dbench-qa:frames-2", 6, "I provide you 6 frames with every two images"),
        ("4dbench-qa:frames-9", 27, "I provide you 27 frames with every nine images"),
        ("4dbench-qa:time-first", 18, "in time order: at each of six uniformly sampled moments"),
        ("4dbench-qa:timestamps", 18, "Each image is preceded by the video (angle)"),
    ],
)
def test_variants(variant: str, n_images: int, phrase: str, qa_release: Path) -> None:
    task = get_task(variant)
    assert task.frame_spec.n_images == n_images
    sample = fourd_bench.load_qa(qa_release).items[0]
    [message] = task.build_messages(
        sample, _fake_frames(task.frame_spec.views, task.frame_spec.frames)
    )
    assert len(message.images) == n_images
    assert phrase in message.content[-1].text


def test_variant_specs() -> None:
    assert get_task("4dbench-qa:views-3").frame_spec.views == (1, 8, 16)
    assert get_task("4dbench-qa:views-4").frame_spec.views == (0, 6, 12, 18)
    spec = get_task("4dbench-qa:time-first+timestamps").frame_spec
    assert spec.order == "time-first" and spec.timestamps
    assert get_task("4dbench-qa", frames=3, sampler="linspace").frame_spec.frames == 3


def test_timestamps_label_each_image(qa_release: Path, tmp_path: Path) -> None:
    config = RunConfig(
        "4dbench-qa:timestamps+time-first",
        str(qa_release),
        "constant:(B)",
        str(tmp_path / "r"),
        limit=1,
        progress=False,
        cache_dir=str(tmp_path / "c"),
    )
    r = Run(config)
    sample = next(iter(r.samples))
    from vidbench.media.frames import load_frames

    frames = load_frames(sample.media, r.task.frame_spec)
    [message] = r.task.build_messages(sample, frames)
    labels = [p.text for p in message.content if isinstance(p, TextPart)][:4]
    assert labels == [
        "[video 1, 0.00s] ",
        "[video 2, 0.00s] ",
        "[video 3, 0.00s] ",
        "[video 1, 0.08s] ",
    ]


def test_rerun_and_stages_alone(qa_release: Path, tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "sent.log"
    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(log))
    monkeypatch.setenv("VIDBENCH_TEST_DELAY", "0")
    out = tmp_path / "res"
    args = (
        "4dbench-qa",
        "--data",
        str(qa_release),
        "--model",
        "python:support_models:LoggingGold",
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--concurrency",
        "4",
    )
    assert run(*args) == 0
    assert len(log.read_text().splitlines()) == 20
    first = json.loads((out / "results.json").read_text())
    assert first["unparsed"] == 0

    assert run(*args) == 0  # same command: every answer comes from the store
    assert len(log.read_text().splitlines()) == 20

    for name in ("results.json", "samples.jsonl", "table.md"):
        (out / name).unlink()
    assert run("--out", str(out), "--stage", "score") == 0
    assert (out / "samples.jsonl").is_file() and not (out / "results.json").exists()
    assert run("--out", str(out), "--stage", "report") == 0
    again = json.loads((out / "results.json").read_text())
    assert again["columns"] == first["columns"] and again["ci95"] == first["ci95"]
    assert len(log.read_text().splitlines()) == 20

    assert run(*args, "--max-tokens", "7") == 0  # other settings: other keys, new calls
    assert len(log.read_text().splitlines()) == 40


def test_infer_needs_the_task(tmp_path: Path, capsys) -> None:
    assert run("--out", str(tmp_path), "--stage", "infer") == 2
    assert "give TASK, --data and --model to infer" in capsys.readouterr().err
    assert run("--out", str(tmp_path), "--stage", "report") == 2
    assert "no run.json" in capsys.readouterr().err


def test_bad_config_stops_at_once(qa_release: Path, tmp_path: Path, capsys) -> None:
    base = ["--data", str(qa_release), "--out", str(tmp_path / "r")]
    assert run("4dbench-qa", *base, "--model", "nosuch:model") == 2
    assert "unknown model spec 'nosuch:model'" in capsys.readouterr().err
    assert run("nosuch-task", *base, "--model", "random") == 2
    assert "unknown task 'nosuch-task'" in capsys.readouterr().err
    assert run("4dbench-qa:views-x", *base, "--model", "random") == 2
    assert "unknown task variant 'views-x'" in capsys.readouterr().err
    assert run("4dbench-qa", *base, "--model", "random", "--model-opt", "device=cuda") == 2
    assert "does not take --model-opt device" in capsys.readouterr().err


def test_bad_media_is_recorded_and_the_run_completes(
    qa_release: Path, tmp_path: Path, capsys
) -> None:
    root = tmp_path / "release"
    shutil.copytree(qa_release, root)
    videos = root / "4D_Object_Question_Answering" / "data" / "4d_object_multi_view_videos"
    uid0, uid1, uid2 = (f"{i:032x}" for i in range(3))
    (videos / uid0 / "view_8_rgb_white_bg.mp4").write_bytes(b"\x00" * 100)
    write_mp4(videos / uid1 / "view_16_rgb_white_bg.mp4", solid_frames(4))
    (videos / uid2 / "view_1_rgb_white_bg.mp4").unlink()
    out = tmp_path / "res"
    assert (
        run(
            "4dbench-qa",
            "--data",
            str(root),
            "--model",
            "constant:(A)",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        )
        == EXIT_INCOMPLETE  # 15 samples without an answer: written, not complete
    )
    results = json.loads((out / "results.json").read_text())
    assert results["n"] == 20 and results["n_scored"] == 5 and results["errors"] == 15
    assert results["errors_by_status"] == {"media": 15}
    assert "15 error(s) (15 media): see error_details" in capsys.readouterr().err
    errors = {d["id"]: d["error"] for d in results["error_details"]}
    suffix = SUBTASK_SUFFIXES["Action"]
    assert f"{uid0}/view_8_rgb_white_bg.mp4" in errors[f"{uid0}_{suffix}"]
    assert "video has 4 frames, fewer than the 6 asked for" in errors[f"{uid1}_{suffix}"]
    assert "view 1 video file not found" in errors[f"{uid2}_{suffix}"]
    store = Store(out)
    assert store.count_responses() == 5
    store.close()


def test_demo_layout_run_via_release_root_and_limit(qa_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    data, model = ["--data", str(qa_release)], ["--model", "constant:(A)", "--out", str(out)]
    frames = [
        "--limit",
        "7",
        "--views",
        "2",
        "--frames",
        "3",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert run("4dbench-qa", *data, *model, *frames) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["n"] == 7
    assert results["frame_spec"]["views"] == [0, 12] and results["frame_spec"]["frames"] == 3
    # gold answers cycle A..D over (object + subtask): 2 of the first 7 are A
    assert results["columns"]["Overall"] == pytest.approx(100 * 2 / 7, abs=0.01)


def test_costly_start_only_when_a_request_needs_the_model(
    qa_release: Path, tmp_path: Path, monkeypatch
) -> None:
    log = tmp_path / "sent.log"
    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(log))
    monkeypatch.setenv("VIDBENCH_TEST_DELAY", "0")
    args = (
        "4dbench-qa",
        "--data",
        str(qa_release),
        "--model",
        "python:support_models:CostlyStart",
        "--out",
        str(tmp_path / "res"),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert run(*args) == 0
    lines = log.read_text().splitlines()
    assert lines[0] == "START" and lines.count("START") == 1 and len(lines) == 21
    assert run(*args) == 0  # everything stored: the model is never started
    assert log.read_text().splitlines() == lines


def test_a_judged_task_without_judge_stops_before_inference(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from conftest import AUTOEVAL

    log = tmp_path / "sent.log"
    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(log))
    args = (
        "--data",
        str(AUTOEVAL),
        "--model",
        "python:support_models:LoggingGold",
        "--out",
        str(tmp_path / "res"),
        "--limit",
        "3",
    )
    assert run("autoeval-video", *args) == 2
    assert "autoeval-video needs an LLM judge: give --judge SPEC" in capsys.readouterr().err
    assert not log.exists()  # no model call was made
    # inference alone is fine (incomplete: only some instances have their clip in the data)
    assert run("autoeval-video", *args, "--stage", "infer") == EXIT_INCOMPLETE
