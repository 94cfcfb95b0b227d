"""Helpers of the AutoEval-Video tests: the real rules, the official prompt assembly written out
independently of vidbench, and the `vidbench` command pointed at a fake judge server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import AUTOEVAL
from vidbench.cli import main
from vidbench.testing import ChatServer

RULES = AUTOEVAL / "AUTO-EVAL-VIDEO.json"
PREDICTIONS = AUTOEVAL / "prediction_sample.json"


def rows(path: Path = RULES) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def official_prompt(rule: str, answer: str) -> str:
    """The official script's `judge()`, verbatim."""
    return rule.replace("[Answer to be judged]:", "[Answer to be judged]: " + answer + "\n")


def prompt_of(body: dict[str, Any]) -> str:
    [message] = body["messages"]
    assert message["role"] == "user" and isinstance(message["content"], str)
    return message["content"]


def judge_args(server: ChatServer) -> list[str]:
    return [
        "--judge",
        f"openai-compat:{server.base_url}#judge",
        "--judge-opt",
        "backoff=0.01",
        "--judge-opt",
        "timeout=10",
    ]


def judging(
    server: ChatServer, rules: Path = RULES, predictions: Path = PREDICTIONS
) -> list[str | Path]:
    """`vidbench judge autoeval-video` of the predictions by the rules, judged by `server`
    (give --out and any other option after it)."""
    rules_and_answers = ["--rules", rules, "--predictions", predictions]
    return ["judge", "autoeval-video", *rules_and_answers, *judge_args(server)]


def vidbench(*args: str | Path) -> int:
    return main(["--no-progress", *map(str, args)])


def write_jsonl(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
