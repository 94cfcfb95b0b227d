"""`vidbench curate mmworld all` end to end: real speech (espeak-ng), the real Whisper model the
`asr` extra ships, real keyframes, the generator and filters on the fake chat server, and the
output run through `vidbench validate mmworld` and `vidbench run mmworld-synth-*`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from curate_support import BIRDHOUSE, BLIND, COLOUR_QUESTION, Oracle, write_videos

from vidbench.cli import main
from vidbench.core.files import read_jsonl
from vidbench.testing import ChatServer


@dataclass
class Curated:
    out: Path
    videos: Path
    oracle: Oracle
    server: ChatServer
    args: list[str]
    exit_code: int
    requests: int


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory, shared_server: ChatServer) -> Iterator:
    root = tmp_path_factory.mktemp("curate")
    videos = write_videos(root / "videos")
    oracle = Oracle(unparsed_first={"visual-generation"})
    shared_server.reset(reply=oracle)
    out = root / "out"
    args = [
        "--no-progress", "curate", "mmworld", "all", str(videos), "--out", str(out),
        "--model", f"openai-compat:{shared_server.base_url}#generator",
        "--asr-cache-dir", str(root / "asr-cache"), "--cache-dir", str(root / "frames"),
        "--keyframes", "4", "--max-side", "64", "--concurrency", "4",
    ]  # fmt: skip
    code = main(args)
    yield Curated(out, videos, oracle, shared_server, args, code, len(shared_server.requests))


def _candidates(out: Path) -> dict[str, dict]:
    return {c["question"] + " @ " + c["video_id"]: c for c in read_jsonl(out / "candidates.jsonl")}


def test_transcripts(curated: Curated) -> None:
    folder = curated.out / "transcripts"
    spoken = json.loads((folder / "workshop.json").read_text())
    assert spoken["status"] == "ok"
    text = spoken["text"].lower()
    for word in ("workshop", "wooden", "hammer", "nails"):
        assert word in text
    assert 0 <= spoken["segments"][0]["start"] < spoken["segments"][-1]["end"] <= 8.5
    silent = json.loads((folder / "silent.json").read_text())
    assert silent["status"] == "no-audio" and "no audio stream" in silent["reason"]
    assert json.loads((folder / "quiet.json").read_text())["status"] == "empty"
    broken = json.loads((folder / "broken.json").read_text())
    assert broken["status"] == "error" and "broken.mp4" in broken["reason"]


def test_questions_kept_and_dropped(curated: Curated) -> None:
    assert curated.exit_code == 0
    found = _candidates(curated.out)
    audio = found[f"{BIRDHOUSE['question']} @ workshop"]
    assert audio["status"] == "kept" and audio["subset"] == "audio"
    assert audio["options"][audio["answer"]] == "A wooden birdhouse"
    assert audio["answers"]["transcript"] == audio["answer"]
    assert audio["answers"]["keyframes"] != audio["answer"]
    blind = found[f"{BLIND['question']} @ workshop"]
    assert blind["status"] == "dropped"
    assert blind["reason"] == "blind: answerable from the question alone"
    for video, colour in (("workshop", "red"), ("silent", "blue"), ("quiet", "green")):
        visual = found[f"{COLOUR_QUESTION} @ {video}"]
        assert visual["status"] == "kept", visual
        assert visual["options"][visual["answer"]] == colour
    assert not any(c["video_id"] == "broken" for c in found.values())


def test_funnel_counts_every_stage(curated: Curated) -> None:
    funnel = json.loads((curated.out / "funnel.json").read_text())
    stages = funnel["stages"]  # report/funnel.py's shape, shared with `curate 4d`
    assert funnel["schema_version"] == 1
    assert list(stages) == ["videos", "asr", "keyframes", "generation", "filter", "output"]
    counts = {name: (s["unit"], s["entered"], s["kept"]) for name, s in stages.items()}
    assert counts == {
        "videos": ("videos", 4, 4),
        "asr": ("videos", 4, 1),
        "keyframes": ("videos", 4, 3),
        "generation": ("questions", 6, 5),
        "filter": ("questions", 5, 4),
        "output": ("questions", 4, 4),
    }
    assert stages["asr"]["dropped"] == {"empty": 1, "no-audio": 1, "error": 1}
    assert stages["keyframes"]["dropped"] == {"unreadable": 1}
    audio = stages["generation"]["parts"]["audio"]
    visual = stages["generation"]["parts"]["visual"]
    assert audio["uncounted"] == {
        "videos skipped: asr failed": 1,
        "videos skipped: no audio stream": 1,
        "videos skipped: empty transcript": 1,
    }
    assert (audio["notes"]["calls"], audio["entered"], audio["dropped"]) == (1, 3, {"malformed": 1})
    assert visual["uncounted"] == {"videos skipped: keyframes failed": 1}
    assert (visual["notes"]["calls"], visual["entered"], visual["kept"]) == (3, 3, 3)
    filtered = stages["filter"]["parts"]["audio"]
    assert (filtered["entered"], filtered["kept"], filtered["pending"]) == (2, 1, 0)
    assert filtered["dropped"] == {"blind: answerable from the question alone": 1}
    assert stages["filter"]["parts"]["visual"]["kept"] == 3
    output = stages["output"]["parts"]
    assert (output["audio"]["kept"], output["audio"]["notes"]) == (1, {"videos": 1})
    assert (output["visual"]["kept"], output["visual"]["notes"]) == (3, {"videos": 3})
    for stage in ("generation", "filter"):
        assert funnel["usage"][stage]["input_tokens"] > 0
    # the visual generator's first reply held no JSON: asked again, once per video
    assert curated.oracle.seen["visual-generation"] == 3 + 1


def test_output_is_a_valid_synthetic_subset(curated: Curated, tmp_path: Path, capsys) -> None:
    records = json.loads((curated.out / "mmworld.json").read_text())
    audio = next(r for r in records if r["subset"] == "audio")
    assert audio["video_id"] == "audio/workshop"
    assert audio["discipline"] == "Tech & Engineering" and audio["subdiscipline"] == "Woodworking"
    assert "hammer" in " ".join(s["text"] for s in audio["transcript"]).lower()
    assert main(["--no-progress", "validate", "mmworld", str(curated.out)]) == 0
    assert "no problems" in capsys.readouterr().err
    for task, n in (("mmworld-synth-audio:rule", 1), ("mmworld-synth-visual:rule", 3)):
        results = tmp_path / task
        args = ["run", task, "--data", str(curated.out), "--model", "random-choice"]
        assert main(["--no-progress", *args, "--out", str(results)]) == 0
        summary = json.loads((results / "results.json").read_text())
        assert (summary["n"], summary["errors"]) == (n, 0)
    subtitled = tmp_path / "subtitles"
    args = ["run", "mmworld-synth-audio:rule+subtitles", "--data", str(curated.out)]
    model = f"blind:openai-compat:{curated.server.base_url}#m"
    assert main(["--no-progress", *args, "--model", model, "--out", str(subtitled)]) == 0
    [request] = curated.server.requests[-1:]
    assert "hammer and nails" in json.dumps(request["messages"][0]["content"])
    assert json.loads((subtitled / "results.json").read_text())["errors"] == 0


def test_rerun_asks_nothing_again(curated: Curated) -> None:
    curated.server.reset(reply=curated.oracle)
    assert main(curated.args) == 0
    assert curated.server.requests == []
    funnel = json.loads((curated.out / "funnel.json").read_text())
    # the transcripts with speech or none
    assert funnel["stages"]["asr"]["notes"]["from the cache"] == 2
    assert funnel["stages"]["filter"]["parts"]["audio"]["kept"] == 1


def test_stages_run_alone_keep_the_funnel_of_the_others(
    curated: Curated, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stage run alone wrote OUT/funnel.json with its own stage only: `asr` after `all` left
    a funnel without generation, filter and output beside the built subsets, and `keyframes`
    after `asr` dropped asr's counts and problems, without a word."""
    cache = curated.args[curated.args.index("--asr-cache-dir") + 1]
    frames = curated.args[curated.args.index("--cache-dir") + 1]

    def stage(name: str, out: Path) -> int:
        argv = ["--no-progress", "curate", "mmworld", name, str(curated.videos), "--out", str(out)]
        own = ["--asr-cache-dir", cache] if name == "asr" else ["--cache-dir", frames]
        return main([*argv, *own])

    before = (curated.out / "funnel.json").read_bytes()
    assert stage("asr", curated.out) == 0
    assert (curated.out / "funnel.json").read_bytes() == before  # all's funnel, kept
    said = " ".join(capsys.readouterr().err.split())
    assert "funnel.json: it holds later stages (keyframes, generation, filter, output)" in said

    out = tmp_path / "staged"
    assert stage("asr", out) == 0
    asr = json.loads((out / "funnel.json").read_text())
    assert list(asr["stages"]) == ["videos", "asr"]
    assert {p["stage"] for p in asr["problems"]} == {"asr"}  # clips without speech
    assert stage("keyframes", out) == 0
    funnel = json.loads((out / "funnel.json").read_text())
    assert list(funnel["stages"]) == ["videos", "asr", "keyframes"]
    assert funnel["stages"]["asr"] == asr["stages"]["asr"]
    assert [p for p in funnel["problems"] if p["stage"] == "asr"] == asr["problems"]
    assert any(p["stage"] == "keyframes" for p in funnel["problems"])  # the broken clip
