"""The official files the annotation app exports, read back by the product's own loaders:
human_annotations.csv, an accepted 4d_qa.json that `vidbench validate 4dbench` accepts, the
human-baseline JSON Lines the predictions backend reads, and the double-review kappa. Also
imports with malformed lines and an item withdrawn while under review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate_support import ADAPTERS, accounts, make_project, qa_candidate, query, writers
from vidbench.annotate import assign, auth, exports, items, work
from vidbench.annotate.project import Project
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.review.exports import accepted_qa
from vidbench.benchmarks.fourd.review.items import import_queue
from vidbench.cli import main
from vidbench.models.predictions import read_prediction_lines

UID0, UID1 = "0" * 32, f"{1:032x}"


@pytest.fixture
def project(qa_release: Path, tmp_path: Path) -> Project:
    return make_project(qa_release, tmp_path)


def _save(project: Project, work_id: int, user: auth.User, **change: str) -> dict:
    conn = project.connect()
    try:
        version = conn.execute("SELECT version FROM work WHERE id = ?", (work_id,)).fetchone()[0]
        return work.save(conn, work_id, user, version, **change, check_edit=ADAPTERS.check_edit)
    finally:
        conn.close()


def test_captions_export_equals_the_expected_csv(project: Project) -> None:
    people = accounts(project)
    first = writers(project, UID0)
    assert len({name for _, name in first}) == 5  # five distinct writers
    for n, (work_id, name) in enumerate(first):
        _save(project, work_id, people[name], content=f"caption {n}, by {name}", status="submitted")
    for work_id, name in writers(project, UID1)[:4]:  # one short: left out, named
        _save(project, work_id, people[name], content="almost", status="submitted")
    back_id, back_name = first[2]
    _save(project, back_id, people["rita"], status="returned", comment="say what it does")

    conn = project.connect()
    returned = exports.export_kind(project, conn, "captions", "ada", None, "4dbench", ADAPTERS)
    assert returned.written == 0 and f"caption:{UID0}: 4 of 5 captions done" in returned.left_out
    _save(project, back_id, people[back_name], content="a cube that spins", status="submitted")
    done = exports.export_kind(project, conn, "captions", "ada", None, "4dbench", ADAPTERS)
    conn.close()

    names = [name for _, name in first]
    expected = (
        "folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        f'{UID0},"caption 0, by {names[0]}","caption 1, by {names[1]}",a cube that spins,'
        f'"caption 3, by {names[3]}","caption 4, by {names[4]}"\n'
    )
    assert done.path.read_text("utf-8") == expected
    assert f"caption:{UID1}: 4 of 5 captions done" in done.left_out


def _reviews(project: Project) -> dict[str, list[tuple[int, str]]]:
    rows = query(
        project,
        "SELECT w.item_id, w.id, u.name FROM work w JOIN users u ON u.id = w.user_id "
        "WHERE w.job = 'review' ORDER BY w.item_id, w.slot",
    )
    out: dict[str, list[tuple[int, str]]] = {}
    for item_id, work_id, name in rows:
        out.setdefault(item_id, []).append((work_id, name))
    return out


def test_double_review_exports_a_valid_4d_qa_json_and_kappa(project: Project, capsys) -> None:
    people = accounts(project)
    conn = project.connect()
    assert assign.assign(conn, "qa", 2, "ada") == 20  # each of the 20 items gets a second reviewer
    conn.close()
    reviews = _reviews(project)
    keys = sorted(reviews)
    assert len(keys) == 20 and all(len({n for _, n in r}) == 2 for r in reviews.values())
    # 16 kept by both, 2 rejected by both, 2 split: agreement 90%, kappa (0.9-0.745)/0.255
    decisions = {k: ("accept", "accept") for k in keys[:16]}
    decisions |= {k: ("reject", "reject") for k in keys[16:18]}
    decisions[keys[18]], decisions[keys[19]] = ("accept", "reject"), ("reject", "accept")
    edited_key = keys[0]
    for key, pair in decisions.items():
        for (work_id, name), decision in zip(reviews[key], pair, strict=True):
            review: dict = {"decision": decision}
            if decision == "reject":
                review["reason"] = "two options are correct"
            if key == edited_key and name == reviews[key][1][1]:
                record = work.public(work.row(project.connect(), work_id))["data"]
                record = {k: record[k] for k in ("id", "uid", "Category", "Options")}
                review = {
                    "decision": "edit",
                    "edited": {**record, "Question": "How many <b>cubes</b>?", "Answer index": 2},
                }
            _save(project, work_id, people[name], content=json.dumps(review), status="submitted")

    conn = project.connect()
    agreement = exports.review_agreement(conn)
    assert agreement == {"n": 20, "agreement": 90.0, "kappa": round(0.155 / 0.255, 4)}
    done = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    qa = json.loads(done.path.read_text("utf-8"))
    kept = sorted(k.removeprefix("qa:") for k in keys[:16])
    assert sorted(qa) == kept and done.written == 16
    assert sum("rejected" in why for why in done.left_out) == 4
    edited = qa[edited_key.removeprefix("qa:")]
    assert edited["Question"] == "How many <b>cubes</b>?" and edited["Answer index"] == 2
    original = json.loads(
        (project.data / fourd.RELEASE_FOLDERS[fourd.QA_FILE] / fourd.QA_FILE).read_text()
    )
    assert qa[kept[1]] == original[kept[1]]
    capsys.readouterr()
    assert main(["--no-progress", "validate", "4dbench", str(done.path.parent)]) == 0
    assert "no problems" in capsys.readouterr().err


def test_human_baseline_answers_feed_the_predictions_backend(project: Project) -> None:
    people = accounts(project)
    conn = project.connect()
    assign.assign(conn, "answer", 1, "ada")
    conn.close()
    rows = query(
        project,
        "SELECT w.id, i.data FROM work w JOIN items i ON i.id = w.item_id "
        "JOIN users u ON u.id = w.user_id WHERE u.name = 'ann1' AND w.job = 'answer'",
    )
    assert len(rows) > 2
    given = {}
    for n, (work_id, data) in enumerate(rows):
        record = json.loads(data)
        if n == 0:
            continue  # one left unanswered: named, not exported
        if n == 1:  # one chosen (the page saves a draft at once) and not submitted: not an answer
            _save(project, work_id, people["ann1"], content="(B)")
            continue
        given[record["id"]] = f"({'ABCD'[n % 4]})"
        _save(project, work_id, people["ann1"], content=given[record["id"]], status="submitted")
    assert "gold" not in work.public(work.row(project.connect(), rows[0][0]))["data"]
    conn = project.connect()
    done = exports.export_kind(project, conn, "answers", "ada", "ann1", "4dbench", ADAPTERS)
    conn.close()
    assert read_prediction_lines(done.path).answers == given
    first, second = (json.loads(rows[n][1])["id"] for n in (0, 1))
    assert done.left_out == [f"{first}: not answered", f"{second}: answer chosen, not submitted"]


def test_a_malformed_queue_imports_its_good_lines_and_names_the_bad(project: Project) -> None:
    queue = project.path / "review_queue.jsonl"
    good = qa_candidate(UID0, "extra", provenance={"generator": "test"})
    lines = [json.dumps(good), "{not json", json.dumps({**good, "id": "x_1", "Answer index": 7})]
    queue.write_text("\n".join(lines) + "\n")
    conn = project.connect()
    done = import_queue(conn, project.data, queue, "ada")
    again = import_queue(conn, project.data, queue, "ada")
    conn.close()
    assert done.added == 1 and again.added == 0 and again.skipped == [f"qa:{UID0}_extra"]
    assert [p.split(":")[0] for p in done.problems] == [f"{queue} line 2", f"{queue} line 3"]
    assert "Answer index" in done.problems[1] or "'id'" in done.problems[1]


def test_an_item_withdrawn_under_review_keeps_the_work_and_leaves_the_export(
    project: Project,
) -> None:
    people = accounts(project)
    key, [(work_id, name)] = next(iter(_reviews(project).items()))
    conn = project.connect()
    items.delete(conn, key, "ada")
    conn.close()
    saved = _save(
        project, work_id, people[name], content='{"decision": "accept"}', status="submitted"
    )
    assert "withdrawn" in saved["warning"]
    assert query(project, "SELECT content FROM work WHERE id = ?", (work_id,))[0][0]
    conn = project.connect()
    records, _ = accepted_qa(conn)
    conn.close()
    assert key.removeprefix("qa:") not in records


def test_the_qa_export_links_the_videos_anew_after_the_project_moved(
    project: Project, tmp_path: Path
) -> None:
    conn = project.connect()
    first = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    link = first.path.parent / fourd.VIDEO_DIR
    assert link.is_dir()
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("data", "project"):  # the project and its data folder, together
        (tmp_path / name).rename(moved / name)
    again = Project.open(moved / "project")
    conn = again.connect()
    second = exports.export_kind(again, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    link = second.path.parent / fourd.VIDEO_DIR
    assert link.resolve() == next((moved / "data").rglob(fourd.VIDEO_DIR)).resolve()
    recorded = json.loads((second.path.parent / "export.json").read_text())["videos_of"]
    assert (Path(recorded) / fourd.VIDEO_DIR).resolve() == link.resolve()


def test_an_item_assigned_while_the_export_reads_is_never_left_unnamed(
    project: Project, tmp_path: Path
) -> None:
    """An admin assigns while another exports: the export's reads are one snapshot, so the new
    item is named under left_out ("not assigned to anyone", as the export found it), never in
    neither list."""
    queue = tmp_path / "review_queue.jsonl"
    queue.write_text(json.dumps(qa_candidate(UID1, "late", "How many cubes?")) + "\n")
    conn = project.connect()
    assert import_queue(conn, project.data, queue, "ada").added == 1
    other = project.connect()
    assigned = []

    def assign_meanwhile(statement: str) -> None:  # SQLite's trace: a statement about to run
        if "NOT EXISTS" in statement and not assigned:  # between its two reads
            assigned.append(assign.assign(other, "qa", None, "ada"))

    conn.set_trace_callback(assign_meanwhile)
    done = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.set_trace_callback(None)
    conn.close()
    other.close()
    assert assigned == [1]  # it did happen between the reads
    assert f"qa:{UID1}_late: not assigned to anyone" in done.left_out


def test_an_exports_folder_that_cannot_be_written_is_named(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.path / "exports").write_text("a file where the folder goes")  # or read-only
    for kind in (["captions"], ["qa"], ["answers", "--user", "ann1"]):
        assert main(["annotate", "export", str(project.path), *kind]) == 2, kind
        said = "".join(capsys.readouterr().err.split())  # the console wraps long paths anywhere
        assert f"cannotwritetheexportinto{project.path}/exports" in said, kind
