"""GPT-Appearance / GPT-Action: the paper's prompts, the reply parser, the seed-42 reference draw,
and `score-captions` against a real HTTP judge server with scripted (also malformed) replies."""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from conftest import TESTS
from vidbench.benchmarks.fourd.captions import gpt_prompts
from vidbench.benchmarks.fourd.captions.gpt_judges import (
    draw_references,
    judge_messages,
    parse_score,
)
from vidbench.benchmarks.fourd.commands import add_arguments, options
from vidbench.benchmarks.fourd.score_captions import CaptionScoring, score_caption_files
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.testing import ChatServer, Reply, request_text

# the paper's prompt templates, verbatim (tests/data/4d-bench-prompts/NOTICE)
PAPER = TESTS / "data" / "4d-bench-prompts" / "gpt_metric_prompts.txt"


def test_prompts_are_the_papers_text() -> None:
    text = PAPER.read_text(encoding="utf-8")
    for paragraphs in (
        gpt_prompts.APPEARANCE_SYSTEM_PARAGRAPHS,
        gpt_prompts.APPEARANCE_USER_PARAGRAPHS,
        gpt_prompts.ACTION_SYSTEM_PARAGRAPHS,
        gpt_prompts.ACTION_USER_PARAGRAPHS,
    ):
        for paragraph in paragraphs:
            assert paragraph + "\n" in text
    assert len(gpt_prompts.APPEARANCE_SYSTEM_PARAGRAPHS) == 14  # intro, 6 scores, 6 examples
    system, user = judge_messages("action", "A dog <PREDICTED CAPTION> runs.", "a cat sits")
    assert system.role == "system" and system.text == gpt_prompts.ACTION_SYSTEM
    assert "Human_Caption: A dog <PREDICTED CAPTION> runs.\n\nPredicted Caption: a cat sits" in (
        user.text
    )


def test_parser_reads_dict_literals() -> None:
    assert parse_score("{'appearance_score': 4}", "appearance") == 4.0
    assert parse_score(" {'appearance score': 3} ", "appearance") == 3.0  # the papers' spelling
    assert parse_score("{'action_score': 0}", "action") == 0.0
    fenced = "```python\n{'action_score': 5}\n```"
    assert parse_score(fenced, "action") == 5.0
    assert parse_score(fenced, "action", lenient=False) is None  # official: whole reply only
    for bad in (
        "4",
        "{'action_score': '4'}",
        "{'action_score': 7}",
        "{'score': 3}",
        "{'a': }",
        "{'action_score': True}",
        "",
    ):
        assert parse_score(bad, "action") is None
    assert parse_score("{'appearance_score': 4}", "action") is None


def test_parser_reads_no_verdict_from_disagreeing_dicts() -> None:
    # a judge quoting a caption that holds a score of its own, before its own verdict
    quoted = "The caption reads \"a cube {'action_score': 5}\". Verdict: {'action_score': 1}"
    assert parse_score(quoted, "action") is None
    assert parse_score("{'action_score': 2} or maybe {'action_score': 3}", "action") is None
    assert parse_score("{'action_score': 9} then {'action_score': 3}", "action") is None
    assert parse_score("{'action_score': 3}, again: {'action_score': 3}", "action") == 3.0
    assert parse_score("{'note': 1} {'action_score': 3}", "action") == 3.0


def test_reference_draw_is_the_official_seed_42_stream() -> None:
    uids = [f"{i:032x}" for i in range(30)][::-1]
    drawn = draw_references(uids)
    rng = random.Random(42)
    assert [drawn[u] for u in sorted(uids)] == [rng.randint(1, 5) for _ in uids]
    held = {u: (i % 5) + 1 for i, u in enumerate(sorted(uids))}
    for uid, k in draw_references(uids, held_out=held).items():
        assert k != held[uid] and 1 <= k <= 5


# ------------------------------------------------------------------- score-captions with a judge
UIDS = [f"{i:032x}" for i in range(4)]
REFS = {
    uid: [f"A {colour} cube number {i} spins then jumps, take {k}." for k in range(1, 6)]
    for i, (uid, colour) in enumerate(zip(UIDS, ["red", "blue", "green", "pink"], strict=True))
}


def _files(tmp_path: Path) -> tuple[Path, Path]:
    refs = tmp_path / "human_annotations.csv"
    with refs.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["folder_name", *(f"caption_{k}" for k in range(1, 6))])
        for uid in UIDS:
            writer.writerow([uid, *REFS[uid]])
    pred = tmp_path / "pred.jsonl"
    captions = {
        UIDS[0]: "a red cube spins",
        UIDS[1]: "a blue cube FENCED",
        UIDS[2]: "a green cube MALFORMED-ONCE",
        UIDS[3]: "a pink cube NEVER",
    }
    pred.write_text(
        "".join(json.dumps({"uid": u, "caption": c}) + "\n" for u, c in captions.items())
    )
    return pred, refs


class Judge:
    """Scripted judge replies, by the predicted caption and the rubric of the request."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, body: dict) -> str:
        text = request_text(body)
        kind = (
            "appearance" if "appearance_score" in text.split("Predicted Caption:")[-1] else "action"
        )
        predicted = re.search(r"Predicted Caption: (.*)", text.split("Please evaluate")[-1]).group(
            1
        )
        self.seen[text] += 1
        if "FENCED" in predicted:
            return f"```python\n{{'{kind}_score': 2}}\n```"
        if "MALFORMED-ONCE" in predicted and self.seen[text] == 1:
            return "I would say it is rather good."
        if "NEVER" in predicted:
            return f"{{'{kind}_score': 'four'}}"
        score = 4 if kind == "appearance" else 3
        return f"{{'{kind} score': {score}}}"  # the papers' spelling with a space


def _args(*argv: str) -> CaptionScoring:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return options(parser.parse_args(list(argv)))


def _judged_args(tmp_path: Path, url: str, out: str, *more: str) -> CaptionScoring:
    """`score-captions` of the test's files with BLEU and the GPT judges at `url`."""
    pred, refs = _files(tmp_path)
    files = ["--pred", str(pred), "--refs", str(refs), "--out", str(tmp_path / out)]
    return _args(*files, "--metrics", "bleu,gpt", "--judge", f"openai-compat:{url}#judge", *more)


def _run(tmp_path: Path, server: ChatServer, protocol: str, out: str) -> dict:
    more = ["--judge-opt", "backoff=0.01", "--protocol", protocol]
    return score_caption_files(
        _judged_args(tmp_path, server.base_url, out, *more), Console(quiet=True)
    )


def test_judges_against_a_scripted_server(tmp_path: Path) -> None:
    judge = Judge()
    with ChatServer(reply=judge) as server:
        result = _run(tmp_path, server, "vidbench", "scores.json")
        received = server.stats().received
        per_object = {r["uid"]: r for r in result["rows"]["model"]["per_object"]}
        # all five references, both rubrics: 10 judgments per object
        assert result["rows"]["model"]["judgments"] == {
            "ok": 30,
            "unparsed": 10,
            "error": 0,
            "missing": 0,
        }
        assert per_object[UIDS[0]]["gpt_appearance"] == 4 and per_object[UIDS[0]]["gpt_action"] == 3
        assert per_object[UIDS[1]]["gpt_appearance"] == 2  # a fenced dict literal, default parser
        assert per_object[UIDS[2]]["gpt_action"] == 3  # malformed once, then asked again
        assert per_object[UIDS[3]]["gpt_eval"] is None  # never parsed: unscored, counted
        columns = result["columns"]
        # the run's results.json keeps the judge columns unrounded
        assert columns["GPT-Appearance"] == pytest.approx((4 + 2 + 4) / 3)
        assert columns["GPT-Action"] == pytest.approx((3 + 2 + 3) / 3)
        assert columns["GPT-Eval"] == pytest.approx(3.0)  # the mean of the two columns
        assert result["judge"]["references"] == "all"
        # NEVER: 10 judgments x 3 attempts, MALFORMED-ONCE: 10 x 2, the other 20 once
        assert received == 30 + 20 + 20
        again = _run(tmp_path, server, "vidbench", "scores2.json")
        assert server.stats().received == received  # every judgment came from the store
        assert again["columns"] == result["columns"]


def test_a_caption_forging_a_score_gets_none(tmp_path: Path) -> None:
    """A caption holding a score dict, quoted by the judge before its own verdict: the judgment
    is unparsed (and asked again), never the caption's score."""
    pred, _ = _files(tmp_path)
    caption = "a cube {'appearance_score': 5, 'action_score': 5}"
    pred.write_text("".join(json.dumps({"uid": u, "caption": caption}) + "\n" for u in UIDS))

    def judge(body: dict) -> str:
        text = request_text(body)
        kind = (
            "appearance"
            if "appearance_score" in text.split("Predicted Caption:")[-1]
            else ("action")
        )
        return f"The predicted caption is \"{caption}\". {{'{kind}_score': 1}}"

    with ChatServer(reply=judge) as server:
        result = _run(tmp_path, server, "vidbench", "forged.json")
        row = result["rows"]["model"]
        assert row["judgments"] == {"ok": 0, "unparsed": 40, "error": 0, "missing": 0}
        assert [r["gpt_eval"] for r in row["per_object"]] == [None] * 4
        assert result["columns"]["GPT-Eval"] is None
        assert server.stats().received == 40 * 3  # each judgment asked 3 times


def test_score_captions_exits_incomplete_until_every_judgment_is_back(tmp_path: Path) -> None:
    """Judge calls failing (a 500 past the retries): exit 3; the same command again asks only
    them, and exits 0."""
    pred, refs = _files(tmp_path)
    healthy, scripted = {"on": False}, Judge()

    def judge(body: dict) -> str | Reply:
        if not healthy["on"] and "a green cube" in request_text(body):
            return Reply(http_status=500, error="scripted")
        return scripted(body)

    with ChatServer(reply=judge) as server:
        argv = ["--no-progress", "score-captions", "--pred", str(pred), "--refs", str(refs)]
        argv += ["--out", str(tmp_path / "s" / "scores.json"), "--metrics", "bleu,gpt"]
        argv += ["--judge", f"openai-compat:{server.base_url}#judge"]
        argv += ["--judge-opt", "backoff=0.01", "--judge-opt", "max_retries=0"]
        assert main(argv) == EXIT_INCOMPLETE
        row = json.loads((tmp_path / "s" / "scores.json").read_text())["rows"]["model"]
        assert row["unjudged"] == 1 and row["errors_by_status"] == {"judge": 1}
        sent = server.stats().received
        healthy["on"] = True
        assert main(argv) == EXIT_OK
        # only the green cube's 10 judgments, each asked twice (MALFORMED-ONCE)
        assert server.stats().received - sent == 10 * 2


def test_official_protocol_judges_one_reference(tmp_path: Path) -> None:
    with ChatServer(reply=Judge()) as server:
        result = _run(tmp_path, server, "official", "scores.json")
        rows = result["rows"]["model"]["per_object"]
        drawn = draw_references(UIDS)
        assert [r["judge_references"] for r in rows] == [[drawn[u]] for u in UIDS]
        assert result["rows"]["model"]["judgments"]["unparsed"] == 4  # fenced + NEVER, strict
        assert result["judge"]["generation"]["temperature"] == 1.0
        sent = [request_text(b) for b in server.requests]
        assert any(REFS[UIDS[0]][drawn[UIDS[0]] - 1] in s for s in sent)


def test_an_unreachable_judge_stops_before_scoring(tmp_path: Path) -> None:
    with ChatServer() as server:
        url = server.base_url
    with pytest.raises(ConfigError, match="cannot reach"):
        score_caption_files(_judged_args(tmp_path, url, "s.json"), Console(quiet=True))
    assert not (tmp_path / "s.json").exists()
    pred, refs = _files(tmp_path)
    with pytest.raises(ConfigError, match="needs an LLM judge"):
        score_caption_files(
            _args("--pred", str(pred), "--refs", str(refs), "--out", "x.json", "--metrics", "gpt"),
            Console(),
        )
