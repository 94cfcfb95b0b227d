"""Answers without a verdict are errors of status `judge`, in every judged path; every judge stage
says what it asked and what it reused; the models scoring needs are checked before inference."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autoeval_support import RULES, judge_args, judging, rows, vidbench
from conftest import AUTOEVAL, make_caption_dataset
from vidbench.core.errors import EXIT_INCOMPLETE
from vidbench.testing import ChatServer, Reply, request_text
from vidbench.testing.tiny_bert import tiny_bert

FAILING_IDS = ("19", "32")  # AutoEval-Video instances (with clips) whose judge call fails
RULE_OF = {str(r["ID"]): r["Rule"] for r in rows()}


def _failing_judge(body: dict) -> str | Reply:
    text = request_text(body)
    if any(RULE_OF[i][:200] in text for i in FAILING_IDS):
        return Reply(http_status=500, error="scripted server error")  # a rerun retries it
    return "The answer matches the rule.\n1"


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The AutoEval-Video instances whose clip is in tests/data (8 of them)."""
    root = tmp_path_factory.mktemp("autoeval")
    (root / "video").mkdir()
    kept = [r for r in rows() if (AUTOEVAL / "video" / f"{r['ID']}.mp4").is_file()][:8]
    for row in kept:
        (root / "video" / f"{row['ID']}.mp4").symlink_to(AUTOEVAL / "video" / f"{row['ID']}.mp4")
    (root / RULES.name).write_text("".join(json.dumps(r) + "\n" for r in kept))
    return root


def _autoeval_run(data: Path, out: Path, server: ChatServer, *stage: str) -> int:
    return vidbench(
        "run", "autoeval-video", "--data", data, "--model", "constant:a man opens a door",
        "--out", out, "--max-side", "32", "--cache-dir", out.parent / "frames",
        *judge_args(server), *stage,
    )  # fmt: skip


def test_run_counts_failed_and_missing_verdicts_as_judge_errors(
    clips: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with ChatServer(reply=_failing_judge) as server:
        assert _autoeval_run(clips, out, server, "--stage", "infer") == 0
        # the judge stage has not run: nothing is judged, and nothing looks complete
        assert _autoeval_run(clips, out, server, "--stage", "score") == EXIT_INCOMPLETE
        assert _autoeval_run(clips, out, server, "--stage", "report") == EXIT_INCOMPLETE
        results = _results(out)
        assert (results["n_scored"], results["errors"], results["unjudged"]) == (0, 8, 8)
        assert results["errors_by_status"] == {"judge": 8}
        assert results["columns"]["Overall"] is None
        assert "8 answers have no verdict; run the judge stage again" in capsys.readouterr().err

        assert _autoeval_run(clips, out, server) == EXIT_INCOMPLETE  # two judge calls fail
        results = _results(out)
        assert (results["n_scored"], results["errors"], results["unjudged"]) == (6, 2, 2)
        details = {d["id"]: d for d in results["error_details"]}
        assert set(details) == set(FAILING_IDS)
        assert all(d["status"] == "judge" for d in details.values())
        assert "judge call failed" in details["19"]["error"]
        assert results["columns"]["Overall"] == 100.0  # over the six judged answers only ...
        assert results["column_n"]["Overall"] == 6  # ... and says so
        err = capsys.readouterr().err
        assert "judge: 8 asked now, 0 reused from the store; 6 ok, 2 failed" in err
        assert "2 answers have no verdict; run the judge stage again" in err

        sent = len(server.requests)
        assert _autoeval_run(clips, out, server) == EXIT_INCOMPLETE
        asked = {json.dumps(r, sort_keys=True) for r in server.requests[sent:]}
        assert len(asked) == 2  # only the failed calls are asked again (each with its retries)
        assert "judge: 2 asked now, 6 reused from the store" in capsys.readouterr().err


@pytest.mark.slow
def test_judge_predictions_lists_answers_without_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(reply=_failing_judge) as server:
        out = tmp_path / "judged"
        assert vidbench(*judging(server), "--out", out) == EXIT_INCOMPLETE
        results = _results(out)
        assert results["errors_by_status"]["judge"] == 2
        assert results["unjudged"] == 2
        judge_errors = [d for d in results["error_details"] if d["status"] == "judge"]
        assert {d["id"] for d in judge_errors} == set(FAILING_IDS)
        printed = " ".join("".join(capsys.readouterr()).split())
        assert "2 answers have no verdict; run the judge stage again" in printed
        assert "asked now" in printed


# ----------------------------------------------------------------------------- captioning
UIDS = [f"{i:032x}" for i in range(3)]


def _captioner(judge: Callable[[str], str | Reply]) -> Callable[[dict], str | Reply]:
    def reply(body: dict) -> str | Reply:
        text = request_text(body)
        if "Your job is to generate one fluent caption" in text:
            return "Caption: a shape spins"
        return judge(text)

    return reply


@pytest.fixture
def caption_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bert = tiny_bert(tmp_path / "bert", ["a", "shape", "spins", "number", "take"])
    monkeypatch.setenv("VIDBENCH_BERT_MODEL", str(bert))
    monkeypatch.setenv("VIDBENCH_BERT_LAYERS", "2")
    return make_caption_dataset(tmp_path / "release", UIDS)


def _caption_run(root: Path, out: Path, server: ChatServer, task: str) -> int:
    return vidbench(
        "run", task, "--data", root, "--model", f"openai-compat:{server.base_url}#cap",
        "--model-opt", "backoff=0.01", "--out", out, "--cache-dir", out.parent / "frames",
        *judge_args(server),
    )  # fmt: skip


def test_official_unparsed_judge_replies_are_reported(
    caption_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def judge(text: str) -> str:  # action replies are prose: the official parser reads none
        return "{'appearance_score': 4}" if "'appearance_score'" in text else "Score: 2 of 5."

    out = tmp_path / "official"
    with ChatServer(reply=_captioner(judge)) as server:
        assert _caption_run(caption_env, out, server, "4dbench-caption:official") == 0
    results = _results(out)
    assert results["columns"]["GPT-Action"] is None and results["columns"]["GPT-Appearance"] == 4
    warning = (
        "GPT-Action: 3 of 3 judge replies could not be parsed (official parser: whole reply as "
        "a dict literal)"
    )
    assert any(w.startswith(warning) for w in results["warnings"])
    assert warning in " ".join(capsys.readouterr().err.split())
    assert results["errors"] == 0  # unparsed replies are the protocol's drop, not errors


def test_a_failed_caption_judgment_makes_the_object_an_error(
    caption_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def judge(text: str) -> str | Reply:
        if "a shape number 1 spins, take 3" in text and "'action_score'" in text:
            return Reply(http_status=500, error="scripted server error")  # a rerun retries it
        return "{'appearance_score': 4}" if "'appearance_score'" in text else "{'action_score': 2}"

    out = tmp_path / "run"
    with ChatServer(reply=_captioner(judge)) as server:
        assert _caption_run(caption_env, out, server, "4dbench-caption") == EXIT_INCOMPLETE
    results = _results(out)
    assert results["errors_by_status"] == {"judge": 1} and results["unjudged"] == 1
    assert results["error_details"][0]["id"] == UIDS[1]
    assert results["column_n"]["GPT-Action"] == 2 and results["column_n"]["CIDEr"] == 2
    assert "1 answer has no verdict; run the judge stage again" in capsys.readouterr().err


# ------------------------------------------------------------------------ before inference
def test_a_missing_bert_model_stops_before_any_caption_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_caption_dataset(tmp_path / "release", UIDS)
    monkeypatch.setenv("VIDBENCH_BERT_MODEL", str(tmp_path / "no-such-bert"))
    with ChatServer() as server:
        assert _caption_run(root, tmp_path / "run", server, "4dbench-caption") == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert "no-such-bert" in err and "VIDBENCH_BERT_MODEL=PATH" in err
    assert "--bert-model" not in err


def test_an_unreachable_judge_stops_before_inference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer() as gone:
        url = gone.base_url
    with ChatServer() as model:
        code = vidbench(
            "run", "autoeval-video", "--data", AUTOEVAL, "--limit", "2", "--out", tmp_path / "r",
            "--model", f"openai-compat:{model.base_url}#m", "--judge", f"openai-compat:{url}#j",
            "--judge-opt", "max_retries=0",
        )  # fmt: skip
        assert code == 2
        assert model.requests == []  # nothing was decoded or asked
    assert "cannot reach" in capsys.readouterr().err


def test_score_captions_on_a_missing_cuda_device_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    refs = tmp_path / "human_annotations.csv"
    refs.write_text("folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n")
    code = vidbench(
        "score-captions", "--human", "--refs", refs, "--out", tmp_path / "s.json",
        "--metrics", "sbert", "--device", "cuda",
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "--device cuda: no such CUDA device here" in err and "Traceback" not in err
