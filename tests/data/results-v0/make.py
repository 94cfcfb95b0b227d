"""Write the results directories of tests/data/results-v0 with the code of an older vidbench
(files without `schema_version` or `outcome`, numbers rounded in results.json), so the tests can
check that today's code still reads them. See README.md in this folder for the command.

Every outcome the older files could express is here: right, wrong and unreadable answers, model
errors (400, refusal, empty reply), a bad record, judge verdicts yes/no/unreadable/failed, an
AutoEval-Video verdict dropped or counted wrong, an empty answer, caption metrics with and
without a judge verdict, and the mean ± std of repeated runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from conftest import make_qa_dataset, write_object_views
from mmworld_support import make_mmworld
from vidbench.cli import main
from vidbench.testing import ChatServer, Reply, request_text
from vidbench.testing.tiny_bert import tiny_bert

KEPT = (
    "run.json",
    "samples.jsonl",
    "usage.json",
    "results.json",
    "table.md",
    "table.csv",
    "table.tex",
)


def vidbench(*args: str | Path) -> int:
    return main(["--no-progress", *map(str, args)])


def _qa_reply(body: dict[str, Any]) -> str | Reply:
    """4D-Bench QA by (object i, question j): right, wrong, unreadable, an error, no text."""
    text = request_text(body)
    i = int(text.split("about object ")[1][0])
    j = int(text.split("Question ")[1][0])
    gold = "ABCD"[(i + j) % 4]
    if j == 0 or (j == 4 and i == 1):
        return f"({gold})"
    if j == 1:
        return "(" + "ABCD"[(i + j + 1) % 4] + ")"
    if j == 2:
        return "I cannot tell from these images."
    if j == 3:
        return (
            Reply(http_status=400, error="scripted bad request")
            if i == 0
            else Reply(refusal="I will not answer.")
        )
    return Reply(text=None)  # no text: status empty


def fourd_qa(work: Path, server: ChatServer) -> None:
    data = make_qa_dataset(work / "data" / "qa", n_objects=2, frames=6)
    qa_file = data / "4D_Object_Question_Answering" / "data" / "4d_qa.json"
    qa = json.loads(qa_file.read_text())
    qa[f"{1:032x}_bad"] = {**qa[f"{1:032x}_motion"], "Answer index": 9}  # a bad record
    qa_file.write_text(json.dumps(qa, indent=1))
    model = f"openai-compat:{server.base_url}#answerer"
    args = ("--views", "1", "--frames", "2", "--cache-dir", "frames")
    vidbench("run", "4dbench-qa", "--data", "data/qa", "--model", model, "--out", "4dbench-qa",
             "--model-opt", "backoff=0.01", *args)  # fmt: skip


def fourd_qa_repeated(work: Path) -> None:
    vidbench("run", "4dbench-qa", "--data", "data/qa", "--model", "random", "--out",
             "4dbench-qa-runs", "--runs", "2", "--limit", "5", "--views", "1", "--frames", "1",
             "--cache-dir", "frames")  # fmt: skip


def _mmworld_reply(body: dict[str, Any]) -> str | Reply:
    """MMWorld by question number n: the model's answer, then the judge's verdict."""
    text = request_text(body)
    n = int(text.split("[q")[1].split("]")[0]) if "[q" in text else 1
    if body.get("model") == "judge":
        return {3: "yes", 4: "no", 5: "maybe", 6: Reply(http_status=400)}.get(n % 7, "yes")
    if n % 7 == 0:
        return Reply(http_status=400, error="scripted bad request")
    gold = ("abc" if n == 5 else "abcd")[n % (3 if n == 5 else 4)]
    if n % 7 == 1:
        return f"({gold})"
    if n % 7 == 2:
        return "(" + ("b" if gold == "a" else "a") + ")"
    return "It is hard to say what happens."  # no option: the judge decides


def mmworld(work: Path, server: ChatServer) -> None:
    make_mmworld(work / "data" / "mmworld")
    vidbench("run", "mmworld:judge-fallback", "--data", "data/mmworld", "--model",
             f"openai-compat:{server.base_url}#answerer", "--judge",
             f"openai-compat:{server.base_url}#judge", "--model-opt", "backoff=0.01",
             "--judge-opt", "backoff=0.01", "--frames", "2", "--cache-dir", "frames",
             "--out", "mmworld-judge-fallback")  # fmt: skip


def _autoeval_reply(body: dict[str, Any]) -> str | Reply:
    text = request_text(body)
    k = int(text.split("answer number ")[1].split(" ")[0]) if "answer number " in text else 0
    return {1: "Reason.\n0", 2: "I cannot tell.", 3: Reply(http_status=400)}.get(
        k % 5, "Reason.\n1"
    )


def autoeval(work: Path, server: ChatServer, rules: Path) -> None:
    predictions = work / "data" / "autoeval" / "predictions.jsonl"
    predictions.parent.mkdir(parents=True, exist_ok=True)
    lines = rules.read_text(encoding="utf-8").splitlines()[:10]  # ten instances
    (predictions.parent / rules.name).write_text("".join(line + "\n" for line in lines))
    rows = [json.loads(line) for line in lines]
    answers = [
        {"ID": row["ID"], "prediction": f"answer number {k} : a person opens a door"}
        for k, row in enumerate(rows[:-1])
    ]
    answers.append({"ID": rows[-1]["ID"], "prediction": "  "})  # an empty answer
    predictions.write_text("".join(json.dumps(a) + "\n" for a in answers))
    judge = ("--judge", f"openai-compat:{server.base_url}#judge", "--judge-opt", "backoff=0.01")
    for protocol in ("robust", "official"):
        vidbench("judge", "autoeval-video", "--rules", "data/autoeval", "--predictions",
                 "data/autoeval/predictions.jsonl", "--out", f"autoeval-video-{protocol}", *judge,
                 "--protocol", protocol, "--judge-attempts", "2")  # fmt: skip


def _caption_judge_reply(body: dict[str, Any]) -> str | Reply:
    """The GPT judges: appearance 4, action 1; the appearance call on "shape one" fails."""
    text = request_text(body)
    kind = "appearance" if "'appearance_score'" in text else "action"
    if "shape one" in text and kind == "appearance":
        return Reply(http_status=400, error="scripted bad request")
    return f"{{'{kind}_score': {4 if kind == 'appearance' else 1}}}"


def caption(work: Path, server: ChatServer) -> None:
    data = work / "data" / "caption" / "4D_Object_Captioning" / "data"
    uids = [f"{i:032x}" for i in range(3)]
    for uid in uids:
        write_object_views(data, uid, frames=6)
    lines = ["folder_name," + ",".join(f"caption_{k}" for k in range(1, 6))]
    lines += [uid + "," + ",".join(f"a shape number {i} spins take {k}" for k in range(5))
              for i, uid in enumerate(uids)]  # fmt: skip
    (data / "human_annotations.csv").write_text("\n".join(lines) + "\n")
    bert = tiny_bert(work / "bert", ["a", "shape", "spins", "number", "take", "zero", "one"])
    os.environ["VIDBENCH_BERT_MODEL"] = str(bert)
    os.environ["VIDBENCH_BERT_LAYERS"] = "2"
    replies = iter(["caption: shape zero spins", "caption: shape one spins", "shape two spins"])

    def reply(body: dict[str, Any]) -> str | Reply:
        if "Your job is to generate one fluent caption" in request_text(body):
            return next(replies)
        return _caption_judge_reply(body)

    server.reset(reply=reply)
    vidbench("run", "4dbench-caption", "--data", "data/caption", "--model",
             f"openai-compat:{server.base_url}#captioner", "--judge",
             f"openai-compat:{server.base_url}#judge", "--model-opt", "backoff=0.01",
             "--judge-opt", "backoff=0.01", "--concurrency", "1", "--views", "1", "--frames",
             "1", "--cache-dir", "frames", "--out", "4dbench-caption")  # fmt: skip


def keep(work: Path, target: Path) -> None:
    """The results files of every run under `work` (no store, no frames, no data)."""
    for results in sorted(work.rglob("results.json")):
        run = results.parent
        if "data" in run.relative_to(work).parts:
            continue
        for name in KEPT:
            if (run / name).is_file():
                destination = target / run.relative_to(work) / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(run / name, destination)


def make(work: Path, target: Path, rules: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)  # relative paths in run.json
    with ChatServer(reply=_qa_reply) as server:
        fourd_qa(work, server)
        fourd_qa_repeated(work)
        server.reset(reply=_mmworld_reply)
        mmworld(work, server)
        server.reset(reply=_autoeval_reply)
        autoeval(work, server, rules)
        caption(work, server)
    keep(work, target)


if __name__ == "__main__":
    make(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve())
