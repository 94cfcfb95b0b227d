"""The Ray workers' answer spool (runner/spool.py): what a killed driver never stored is stored by
the next run, once; a line cut short by a killed worker is left out; the files go away."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.requests import Response, Usage
from vidbench.runner.data_identity import start_over
from vidbench.runner.recorder import Answer, store_answer
from vidbench.runner.spool import AnswerSpool, folder_of, take_spooled
from vidbench.runner.store import FailedCall, Store


def _answer(n: int, ok: bool = True) -> Answer:
    response = (
        Response(f"key{n}", f"(A) {n}", usage=Usage(10, 2), retried=("server: HTTP 500: busy",))
        if ok
        else Response(f"key{n}", None, error="gave up after 7 attempts", status="error")
    )
    return Answer(f"s{n}", f"prompt{n}", {"prompt": [f"question {n}"], "frames": []}, response)


def test_the_answers_a_driver_never_stored_are_stored_once(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.start_run("plan", {})
    folder = folder_of(tmp_path)
    folder.mkdir()
    spool = AnswerSpool.open(str(folder), "0.0", "plan", run_id)
    assert spool is not None
    answers = [_answer(0), _answer(1), _answer(2, ok=False), _answer(3, ok=False)]
    spool.write(answers)
    spool.handle.write('{"plan": "plan", "run_id": 1, "sample_id": "s4", "prompt_ha')  # cut
    spool.handle.close()
    store_answer(store, "plan", run_id, answers[0])  # what the driver stored before it died
    store_answer(store, "plan", run_id, answers[2])

    assert take_spooled(store) == 2  # s1's answer and s3's failure
    assert set(store.responses("plan")) == {"s0", "s1"}
    assert store.responses("plan")["s1"].text == "(A) 1"
    assert store.last_failures("plan") == {
        "s2": FailedCall("error", "s2: gave up after 7 attempts"),
        "s3": FailedCall("error", "s3: gave up after 7 attempts"),
    }
    retried = [f for f in store.all_failures() if f.status == "retried"]
    assert [f.sample_id for f in retried] == ["s0", "s1"]  # each kept once
    assert not folder.exists()
    assert take_spooled(store) == 0
    store.close()


def test_a_worker_whose_node_lacks_the_folder_writes_nothing(tmp_path: Path) -> None:
    assert AnswerSpool.open(str(tmp_path / "elsewhere"), "0.0", "plan", 1) is None
    assert AnswerSpool.open(None, "0.0", "plan", 1) is None


def test_fresh_deletes_the_spooled_answers_of_the_run_it_starts_over(tmp_path: Path) -> None:
    """`--fresh` after a killed Ray driver: the old run's spooled answers were stored into the
    new store by its first infer stage (and scored, for a sample the new run failed to ask)."""
    with Store(tmp_path) as store:
        run_id = store.start_run("plan", {})
    folder = folder_of(tmp_path)
    folder.mkdir()
    spool = AnswerSpool.open(str(folder), "0.0", "plan", run_id)
    assert spool is not None
    spool.write([_answer(0)])
    spool.handle.close()
    gone = start_over(tmp_path)
    assert folder / f"{run_id}-0.0.jsonl" in gone and tmp_path / Store.FILENAME in gone
    assert not folder.exists()
    with Store(tmp_path) as store:
        assert take_spooled(store) == 0 and not store.responses("plan")
