"""Failed calls leave their question undecided (exit status 3: incomplete) and the next run
asks only them; the funnel prices every stage per model from VIDBENCH_PRICES; a re-rendered
object is asked about afresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from qa_support import R_GOOD, generic, rendered_folder

from conftest import solid_frames
from vidbench.cli import main
from vidbench.media.encode import write_mp4
from vidbench.testing import ChatServer, Reply, request_text


def failing_validator(body: dict[str, Any]) -> str | Reply:
    """The validator's call about the Appearance question fails (a 400: not retried)."""
    text = request_text(body)
    if "You check" in text and "Appearance question" in text:
        return Reply(http_status=400, error="bad request")
    return generic(body)


def test_failed_calls_are_undecided_then_retried(
    tmp_path: Path, shared_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.json"
    url = shared_server.base_url
    table = {f"openai-compat:{url}#g": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
    prices.write_text(json.dumps(table))
    monkeypatch.setenv("VIDBENCH_PRICES", str(prices))
    folder = rendered_folder(tmp_path / "render")
    shared_server.reset(reply=failing_validator)
    out = tmp_path / "out"
    argv = ["--no-progress", "curate", "4d", "qa", "--data", str(folder), "--out", str(out)]
    argv += ["--generator", f"openai-compat:{url}#g", "--validator", f"openai-compat:{url}#v"]
    argv += ["--blind", f"openai-compat:{url}#b1", "--blind", f"openai-compat:{url}#b2"]
    argv += ["--views", "0,1", "--frames", "2", "--cache-dir", str(tmp_path / "frames")]
    assert main(argv) == 3  # incomplete
    funnel = json.loads((out / "funnel.json").read_text())
    # views 0 and 1 only: the object whose view 8 is broken is usable here (two objects)
    assert funnel["details"]["objects"]["used"] == 2
    assert funnel["details"]["subtasks"]["Appearance"]["undecided"] == 2
    assert funnel["details"]["total"]["kept"] == 8
    assert f"{R_GOOD}_appearance" not in json.loads((out / "4d_qa.json").read_text())
    usage = funnel["usage"]
    generate = usage["generate"]
    expected = (generate["input_tokens"] * 1.0 + generate["output_tokens"] * 2.0) / 1e6
    assert generate["cost_usd"] == pytest.approx(expected, abs=1e-6) and expected > 0
    assert usage["validate"]["cost_usd"] is None  # no price for the validator: never a guess

    shared_server.reset(reply=generic)
    assert main(argv) == 0
    assert len(shared_server.requests) == 2 * (1 + 2)  # the failed checks, then their blind calls
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["details"]["total"]["kept"] == 10 and funnel["details"]["total"]["undecided"] == 0


def test_nothing_kept_names_the_main_reasons_and_where_to_look(
    tmp_path: Path, shared_server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every generator reply unreadable: the terminal says why nothing was kept and which file
    holds the replies, not just "0 questions kept of 0 generated"."""
    folder = rendered_folder(tmp_path / "render")
    shared_server.reset(reply="I would rather describe the object in prose.")
    out = tmp_path / "out"
    url = shared_server.base_url
    argv = ["curate", "4d", "qa", "--data", str(folder), "--out", str(out)]
    argv += ["--generator", f"openai-compat:{url}#g", "--validator", f"openai-compat:{url}#v"]
    argv += ["--blind", f"openai-compat:{url}#b1", "--blind", f"openai-compat:{url}#b2"]
    argv += ["--views", "0,1", "--frames", "2", "--cache-dir", str(tmp_path / "frames")]
    argv += ["--subtasks", "motion,appearance", "--attempts", "1"]
    assert main(argv) == 0
    printed = capsys.readouterr()
    # the progress bar names the stage and the model (cut in its middle to fit), not "judge"
    bar = printed.out.strip()
    assert bar.startswith("generate · ") and "/v1#g " in bar and "judge" not in bar
    said = " ".join(printed.err.split())  # the console wraps long lines
    assert "0 questions kept of 0 generated" in said
    # 2 objects x 2 subtasks x 2 questions asked for; 4 replies, none with a question
    assert "0 kept of 8 questions asked for; the main reasons:" in said
    assert "4 generator replies held no readable questions" in said
    assert f'{out / "funnel.json"} "problems"' in said
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["details"]["total"]["replies unparsed"] == 4
    assert len([p for p in funnel["problems"] if "unparsed reply" in p]) == 4


def test_a_re_rendered_object_is_asked_about_afresh(
    tmp_path: Path, shared_server: ChatServer
) -> None:
    """The store keys an image by its label: an object whose videos changed between two runs
    (rendered again under the same uid) gets new questions, not the replies about its old
    videos; the unchanged object's are reused."""
    folder = rendered_folder(tmp_path / "render")
    url = shared_server.base_url
    argv = ["--no-progress", "curate", "4d", "qa", "--data", str(folder)]
    argv += ["--out", str(tmp_path / "out"), "--subtasks", "motion"]
    argv += ["--generator", f"openai-compat:{url}#g", "--validator", f"openai-compat:{url}#v"]
    argv += ["--blind", f"openai-compat:{url}#b1", "--blind", f"openai-compat:{url}#b2"]
    argv += ["--views", "0,1", "--frames", "2", "--cache-dir", str(tmp_path / "frames")]
    shared_server.reset(reply=generic)
    assert main(argv) == 0
    for k in (0, 1):  # R_GOOD rendered again: other pixels
        write_mp4(folder / R_GOOD / f"view_{k}_rgb_white_bg.mp4", solid_frames(8, seed=50 + k))
    shared_server.reset(reply=generic)
    assert main(argv) == 0
    asked = [request_text(b) for b in shared_server.requests if b["model"] == "g"]
    assert len(asked) == 1 and R_GOOD in asked[0]
