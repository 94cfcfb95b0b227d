"""The `4dbench-caption` task: prompt, caption extraction, variants, and `vidbench run` end to end
with a captioning model and a judge on a real HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_caption_dataset
from vidbench.benchmarks.fourd.caption_task import extract_caption
from vidbench.core.errors import ConfigError
from vidbench.registry import get_task
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.testing import ChatServer, request_text
from vidbench.testing.tiny_bert import tiny_bert

UIDS = [f"{i:032x}" for i in range(3)]


def test_caption_extraction_is_the_official_one() -> None:
    assert extract_caption("Sure! Caption: A red cube spins.  ") == ("A red cube spins.", True)
    assert extract_caption("CAPTION:x caption: y") == ("x caption: y", True)
    assert extract_caption("  A red cube spins. ") == ("  A red cube spins. ", False)


def test_prompt_variants_and_plan() -> None:
    task = get_task("4dbench-caption")
    text = task.prompt_text()
    assert text.startswith(
        "I have multiple videos of the object captured from different angles. I provide you 18 "
        "images, with every six images uniformly sampled from one video, each video captured "
        "from a different angle. Your job is"
    )
    assert text.count("Example ") == 5 and text.endswith("raising his right hand up.")
    assert task.frame_spec == get_task("4dbench-qa").frame_spec  # views 1,8,16 x 6, interval
    assert get_task("4dbench-caption:frames-3+timestamps").prompt_text().count("three images") == 1
    official = get_task("4dbench-caption:official+time-first")
    assert official.protocol == "official" and official.metrics.judge_references == "one"
    assert official.settings() == get_task("4dbench-caption:time-first").settings()  # same plan
    assert get_task("4dbench-caption:coco").protocol == "coco"
    given = get_task("4dbench-caption:given+official")  # answers are captions made elsewhere
    assert given.source.captions_given and not task.source.captions_given
    assert given.settings() == task.settings()  # how answers are read is not what was asked
    assert given._caption("a cube") == ("a cube", True)
    assert task._caption("a cube") == ("a cube", False)  # no marker: scored whole, unparsed
    with pytest.raises(ConfigError, match="unknown task variant"):
        get_task("4dbench-caption:fancy")
    with pytest.raises(ConfigError, match="one scoring protocol"):
        get_task("4dbench-caption:official+coco")


def _reply(body: dict, asked: list[int] = []) -> str:  # noqa: B006 - counts caption requests
    text = request_text(body)
    if "Your job is to generate one fluent caption" in text:
        asked.append(1)
        return "A shape spins." if len(asked) == 1 else "Caption: a shape spins"
    kind = "appearance" if "'appearance_score'" in text else "action"
    return f"{{'{kind}_score': {4 if kind == 'appearance' else 1}}}"


def _config(root: Path, out: Path, url: str, task: str, judge: bool) -> RunConfig:
    return RunConfig(
        task=task,
        data=str(root),
        model=f"openai-compat:{url}#captioner",
        out=str(out),
        cache_dir=str(out.parent / "frames"),
        progress=False,
        model_options={"backoff": "0.01"},
        judge=f"openai-compat:{url}#judge" if judge else None,
        judge_options={"backoff": "0.01"},
    )


@pytest.mark.slow
def test_run_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_caption_dataset(tmp_path / "release", UIDS)
    bert = tiny_bert(tmp_path / "bert", ["a", "shape", "spins", "number", "take"])
    monkeypatch.setenv("VIDBENCH_BERT_MODEL", str(bert))
    monkeypatch.setenv("VIDBENCH_BERT_LAYERS", "2")
    out = tmp_path / "run"
    with ChatServer(reply=_reply) as server:
        Run(_config(root, out, server.base_url, "4dbench-caption", judge=True)).run()
        results = json.loads((out / "results.json").read_text())
        captions = [b for b in server.requests if "fluent caption" in request_text(b)]
        assert len(captions) == 3 and "18 images, with every six" in request_text(captions[0])
        cols = results["columns"]
        assert list(cols) == [
            "CIDEr",
            "BLEU@4",
            "METEOR",
            "ROUGE",
            "BERT",
            "SBERT",
            "GPT-Appearance",
            "GPT-Action",
            "GPT-Eval",
        ]
        assert cols["GPT-Appearance"] == 4.0 and cols["GPT-Action"] == 1.0  # 0..5, not x100
        assert cols["GPT-Eval"] == 2.5 and results["ci95"]["GPT-Eval"] is None
        assert results["ci95"]["GPT-Appearance"] == [4.0, 4.0]
        assert 0 < cols["SBERT"] <= 100 and cols["BLEU@4"] is not None
        scoring = results["caption_scoring"]
        assert scoring["judge_references"] == "all" and scoring["judgments"]["ok"] == 30
        assert scoring["bert"]["model"] == str(bert) and scoring["gpt_columns"] == "judged"
        samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
        assert sorted(s["details"]["caption"] for s in samples) == [
            "A shape spins.",
            *["a shape spins"] * 2,
        ]
        assert results["unparsed"] == 1  # no "caption:": scored whole, flagged

        # Another scoring protocol reuses the stored captions; no judge: GPT columns empty.
        sent = len(captions)
        official = Run(_config(root, out, server.base_url, "4dbench-caption:official", False))
        official.run()
        again = [b for b in server.requests if "fluent caption" in request_text(b)]
        assert len(again) == sent
        results = json.loads((out / "results.json").read_text())
        assert results["protocol"] == "official"
        assert all(results["columns"][c] is None for c in ("GPT-Appearance", "GPT-Eval"))
        assert "give --judge" in results["caption_scoring"]["gpt_columns"]
        assert results["columns"]["CIDEr"] is not None
