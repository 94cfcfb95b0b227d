"""`curate 4d qa` over a procedural 4D-Bench dataset against the fake chat server (every model
answers after `--latency` s, room for 64 requests at once): the wall time of a first run (cold
frame cache), of a rerun (everything from the store: no call), and the calls per stage.

    python bench/curate_qa.py [--objects 20] [--latency 1.0] [--concurrency 32]

The scripted models: the generator writes two questions per object and subtask, the validator
rejects one candidate in four, blind model 1 answers one question in three correctly, blind
model 2 one in two. Ideal first-run time: the stages run one after another, each
ceil(calls / concurrency) x latency (the generator's and the validator's frames are decoded
before their stage starts).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.cli import main as vidbench
from vidbench.testing import ChatServer, request_text


def _bucket(text: str, n: int) -> int:
    return zlib.crc32(text.encode()) % n


def reply(body: dict[str, Any]) -> str:
    text = request_text(body)
    if "You are writing" in text:
        uid = re.search(r"object (\w+)\.", text).group(1)  # type: ignore[union-attr]
        subtask = re.search(r"Subtask: ([A-Za-z ]+)\.", text).group(1)  # type: ignore[union-attr]
        questions = [
            {
                "question": f"{subtask} question {n} about {uid}?",
                "options": {"A": "right", "B": "wrong one", "C": "wrong two", "D": "wrong three"},
                "answer": "A",
            }
            for n in (1, 2)
        ]
        return (
            "Reasoning about the views.\n```json\n" + json.dumps({"questions": questions}) + "\n```"
        )
    question = re.search(r"Question: (.*)", text).group(1)  # type: ignore[union-attr]
    if "You check" in text:
        verdict = "reject" if _bucket(question, 4) == 0 else "accept"
        return json.dumps({"verdict": verdict, "reason": "wrong answer"})
    options = dict(re.findall(r"^\(([A-D])\) (.*)$", text, re.M))
    gold = next(k for k, v in options.items() if v == "right")
    right = _bucket(question + body["model"], 3 if body["model"] == "blind1" else 2) == 0
    return f"({gold if right else next(k for k in 'ABCD' if k != gold)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=20)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ChatServer(latency=args.latency, reply=reply) as server,
    ):
        data = generate(Path(tmp) / "data", objects=args.objects, frames=48, size=args.size)
        url = server.base_url
        argv = ["--no-progress", "curate", "4d", "qa", "--data", str(data), "--out", f"{tmp}/out"]
        argv += ["--generator", f"openai-compat:{url}#g", "--validator", f"openai-compat:{url}#v"]
        argv += ["--blind", f"openai-compat:{url}#blind1", "--blind", f"openai-compat:{url}#blind2"]
        argv += ["--concurrency", str(args.concurrency), "--cache-dir", f"{tmp}/frames"]
        start = time.perf_counter()
        assert vidbench(argv) == 0
        first = time.perf_counter() - start
        funnel = json.loads(Path(f"{tmp}/out/funnel.json").read_text())
        server.reset(latency=args.latency, reply=reply)
        start = time.perf_counter()
        assert vidbench(argv) == 0
        rerun = time.perf_counter() - start
        calls = funnel["calls this run"]
        waves = math.ceil(calls["generate"] / args.concurrency)
        waves += math.ceil(calls["validate"] / args.concurrency)
        waves += 2 * math.ceil(calls["blind"] / 2 / args.concurrency)  # one model, then the other
        ideal = waves * args.latency
        total = funnel["total"]
        print(f"objects {args.objects}, latency {args.latency} s, concurrency {args.concurrency}")
        print(f"calls per stage (first run): {calls}")
        print(
            f"first run {first:.1f} s (ideal {ideal:.0f} s of waiting), rerun {rerun:.1f} s, "
            f"requests on rerun {len(server.requests)}"
        )
        print(
            f"funnel: generated {total['generated']}, candidates {total['candidates']}, "
            f"validator rejects {sum(total['validator rejects'].values())}, blind-dropped "
            f"{total['blind-dropped']}, kept {total['kept']}; "
            f"gold letters {funnel['letter balance']['Overall']}"
        )


if __name__ == "__main__":
    main()
