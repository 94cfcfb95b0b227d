"""The answers Ray workers write down themselves, so none is lost with a killed driver.

On Ray the driver is the store's only writer (runner/ray/driver.py), and an answer travels from
the worker that got it to the driver before it is stored: a driver killed meanwhile (`kill -9`)
would lose the answers on their way, and the rerun would ask the model again for answers it had
already given. So each worker also appends every answer it gets, before handing it over, to a
file of its own in the results directory, RESULTS/.ray-answers/RUN-WORKER.jsonl (when that
folder is on the worker's node: a local cluster, or a shared disk), one JSON line each, written
whole and flushed (a worker killed mid-line leaves a line no reader takes).

`take_spooled` stores what those files hold that the store lacks, then deletes them: the Ray
driver at the end of its infer stage (whatever ended it), and every infer stage as it starts (a
driver that was killed). An answer already stored is left as it is; a failure is stored unless
the store has the same one for that request.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import IO, Any

from vidbench.core.files import json_lines
from vidbench.core.requests import Response, Usage
from vidbench.runner.recorder import Answer, failure_message, store_answer
from vidbench.runner.store import Store

FOLDER = ".ray-answers"


def folder_of(results_dir: Path) -> Path:
    return results_dir / FOLDER


class AnswerSpool:
    """One worker's file of answers (opened only where the results directory is reachable)."""

    def __init__(self, handle: IO[str], plan: str, run_id: int) -> None:
        self.handle, self.plan, self.run_id = handle, plan, run_id

    @classmethod
    def open(cls, folder: str | None, name: str, plan: str, run_id: int) -> AnswerSpool | None:
        """The spool of worker `name`, or None where `folder` is not on this node."""
        if folder is None or not Path(folder).is_dir():
            return None
        path = Path(folder) / f"{run_id}-{name}.jsonl"
        return cls(path.open("a", encoding="utf-8"), plan, run_id)  # closed with the worker

    def write(self, answers: list[Answer]) -> None:
        lines = [
            json.dumps(
                {"plan": self.plan, "run_id": self.run_id, **dataclasses.asdict(a)},
                ensure_ascii=False,
            )
            + "\n"
            for a in answers
        ]
        self.handle.write("".join(lines))
        self.handle.flush()


def _answer(line: dict[str, Any]) -> tuple[str, int, Answer]:
    response = dict(line["response"])
    response["usage"] = Usage(**response["usage"])
    response["retried"] = tuple(response["retried"])
    answer = Answer(line["sample_id"], line["prompt_hash"], line["record"], Response(**response))
    return str(line["plan"]), int(line["run_id"]), answer


def take_spooled(store: Store) -> int:
    """Store the spooled answers the store lacks and delete the spool files; how many were
    stored."""
    folder = folder_of(store.path.parent)
    if not folder.is_dir():
        return 0
    taken = 0
    for path in sorted(folder.glob("*.jsonl")):
        for line in json_lines(path):
            if line.error is not None:  # cut short by a killed worker
                continue
            try:
                if not isinstance(line.value, dict):
                    raise TypeError("not a record")
                plan, run_id, answer = _answer(line.value)
            except (KeyError, TypeError, ValueError):  # not a line a worker wrote
                continue
            response = answer.response
            if response.ok and store.answered_among(plan, [response.key]):
                continue
            failed = None if response.ok else store.failure_of(response.key)
            if failed is not None and failed.error == failure_message(answer):
                continue
            store_answer(store, plan, run_id, answer)
            taken += 1
        path.unlink()
    with contextlib.suppress(OSError):  # a worker still writing keeps it
        folder.rmdir()
    return taken
