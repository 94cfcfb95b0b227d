"""The fake server's scripted replies (`--replies FILE`), which the docs' curation dry runs use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai import OpenAI

from vidbench.testing import ChatServer
from vidbench.testing.chat_server import scripted_replies


def _ask(server: ChatServer, text: str) -> str:
    client = OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
    reply = client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": text}]
    )
    return reply.choices[0].message.content or ""


def test_first_matching_rule_answers_else_the_default(tmp_path: Path) -> None:
    rules = [
        {"when": "understands the AUDIO", "reply": {"questions": []}},
        {"when": "AUDIO", "reply": "never reached for the text above"},
        {"when": ["Is this right?", "cat"], "reply": "no"},
        {"when": "Is this right?", "reply": "yes"},
    ]
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(rules))
    with ChatServer(reply=scripted_replies(str(path), "(A)")) as server:
        assert _ask(server, "Someone who understands the AUDIO writes") == '{"questions": []}'
        assert _ask(server, "Is this right? Answer yes or no.") == "yes"
        assert _ask(server, "A cat. Is this right?") == "no"  # a list: every text must occur
        assert _ask(server, "Which option?") == "(A)"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "Expecting value"),
        ('{"when": "x"}', "expected a list"),
        ("[{}]", "a list"),
        ('[{"when": [], "reply": "x"}]', "a list"),
    ],
)
def test_a_bad_replies_file_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "replies.json"
    path.write_text(content)
    with pytest.raises(SystemExit, match=message) as stopped:
        scripted_replies(str(path), "(A)")
    assert str(path) in str(stopped.value)
