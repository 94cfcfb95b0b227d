"""`vidbench audit` on runs of a declared benchmark with known faults (tests/audit_support.py):
the flags land on the faulty items and nowhere else, blind runs are recognised from run.json,
the position bias of a model that always answers A is found, audit.json has the issue's shape,
the page escapes what it shows, `vidbench view` links the page, and bad input is refused."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from audit_support import BLIND_RIGHT, EASY, HARD, WRONG_GOLD, make_runs
from custom_support import vidbench
from vidbench.audit.link import AUDITS_FILE


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], dict]:
    root = tmp_path_factory.mktemp("audit")
    _, runs = make_runs(root)
    assert vidbench("audit", *runs, "--out", root / "audit", "--no-duplicates") == 0
    return root, runs, json.loads((root / "audit" / "audit.json").read_text())


def _flagged(document: dict, kind: str) -> dict[str, dict]:
    return {
        item["id"]: flag
        for item in document["items"]
        for flag in item["flags"]
        if flag["kind"] == kind
    }


def test_the_document_has_the_issue_shape(audited: tuple[Path, list[Path], dict]) -> None:
    _, runs, document = audited
    assert set(document) == {"items", "models", "summary"}
    assert len(document["items"]) == 40 and len(document["models"]) == len(runs)
    for item in document["items"]:
        assert {"id", "difficulty", "discrimination", "flags"} <= set(item)
        assert isinstance(item["difficulty"], float) and isinstance(item["discrimination"], float)
        for flag in item["flags"]:
            assert set(flag) == {"kind", "score", "reason", "suggested", "reviewed"}
            assert flag["reviewed"] is False  # no decisions file: nothing reviewed yet
            assert 0 <= flag["score"] <= 1 and flag["reason"]
    assert document["summary"]["item_model"]["model"] == "2PL"
    assert document["summary"]["item_model"]["library"].startswith("mirt ")


def test_a_wrong_gold_is_flagged_with_the_option_the_models_agree_on(
    audited: tuple[Path, list[Path], dict],
) -> None:
    gold = _flagged(audited[2], "gold")
    expected = {f"q{i:02d}": "ABCD"[(i % 4 + shift) % 4] for i, shift in WRONG_GOLD.items()}
    assert {key: gold[key]["suggested"] for key in expected} == expected
    assert all(gold[key]["score"] > 0.9 for key in expected)
    assert "6 of 7 chose B, 0 the gold D" in gold["q03"]["reason"]  # the seventh: always A
    # the only other: q13, whose gold only the weakest model chose, far less sure
    assert set(gold) - set(expected) <= {f"q{HARD:02d}"}
    assert gold.get(f"q{HARD:02d}", {"score": 0})["score"] < 0.5


def test_blind_runs_are_recognised_and_their_items_flagged(
    audited: tuple[Path, list[Path], dict],
) -> None:
    _, _, document = audited
    blind = {m["model"] for m in document["models"] if m["blind"]}
    assert blind == {"blind:predictions:blind0", "blind:predictions:blind1"}
    assert document["summary"]["blind_models"] == 2 and document["summary"]["models"] == 7
    assert set(_flagged(document, "blind")) == {f"q{i:02d}" for i in BLIND_RIGHT}
    assert "2 of 2 blind run(s) right" in _flagged(document, "blind")["q20"]["reason"]


def test_chance_easy_and_position_bias(audited: tuple[Path, list[Path], dict]) -> None:
    _, _, document = audited
    assert f"q{HARD:02d}" in _flagged(document, "chance")
    assert set(_flagged(document, "easy")) == {f"q{EASY:02d}"}
    bias = {m["model"]: m["position_bias"] for m in document["models"]}
    assert bias["predictions:always-a"]["favoured"] == "A"
    assert bias["predictions:always-a"]["biased"] and bias["predictions:always-a"]["p_value"] < 1e-6
    assert not any(b["biased"] for name, b in bias.items() if name != "predictions:always-a")
    assert document["summary"]["position_bias"]["gold"]["biased"] is False
    assert document["summary"]["position_bias"]["gold"]["shares"] == dict.fromkeys("ABCD", 0.25)


def test_sizing_in_the_summary(audited: tuple[Path, list[Path], dict]) -> None:
    sizing = audited[2]["summary"]["sizing"]
    assert sizing["n"] == 40
    low, high = sizing["ci95"]
    assert low < sizing["accuracy"] < high and high - low > 0.25  # 40 items: a wide interval
    assert 0.2 < sizing["detectable_observed"] < 0.4


def test_the_page_and_the_view_link(audited: tuple[Path, list[Path], dict], tmp_path: Path) -> None:
    root, runs, document = audited
    page = (root / "audit" / "audit.html").read_text()
    assert "Audit: custom:" in page and "<script" not in page
    assert page.count('<tr class="k-gold') == len(_flagged(document, "gold"))
    flagged = sum(1 for item in document["items"] if item["flags"])
    assert page.count("<tr class=") == flagged == document["summary"]["flagged_items"]
    for run in runs:
        assert json.loads((run / AUDITS_FILE).read_text())["audits"] == [
            str((root / "audit").resolve())
        ]
    report = tmp_path / "report"
    assert vidbench("view", *runs, "--out", report, "--no-thumbnails", "--videos", "none") == 0
    assert (report / "audits" / "audit-0.html").read_text() == page
    meta = (report / "data" / "meta.js").read_text()
    found = json.loads(re.search(r"vidbenchView\.meta\((.*)\);", meta).group(1))["audits"]
    assert found == [
        {"href": "audits/audit-0.html", "folder": str((root / "audit").resolve()), "runs": 9}
    ]


def test_a_view_leaves_out_an_audit_its_folder_no_longer_holds(
    audited: tuple[Path, list[Path], dict], tmp_path: Path
) -> None:
    """An audit written again into the same --out with other runs replaces the page the first
    runs' audits.json point at: their view no longer links it."""
    _, runs, _ = audited
    out = tmp_path / "audit"
    assert vidbench("audit", runs[0], runs[1], "--out", out, "--no-duplicates") == 0
    assert vidbench("audit", runs[2], runs[3], "--out", out, "--no-duplicates") == 0
    assert str(out.resolve()) in json.loads((runs[0] / AUDITS_FILE).read_text())["audits"]

    def linked(run: Path) -> list[str]:
        report = tmp_path / f"report-{run.name}"
        args = ["view", run, "--out", report, "--no-thumbnails", "--videos", "none"]
        assert vidbench(*args) == 0
        meta = (report / "data" / "meta.js").read_text()
        shown = json.loads(re.search(r"vidbenchView\.meta\((.*)\);", meta).group(1))["audits"]
        return [entry["folder"] for entry in shown]

    assert str(out.resolve()) not in linked(runs[0])  # the page now audits runs 2 and 3
    assert str(out.resolve()) in linked(runs[2])


def test_text_from_the_data_is_escaped(tmp_path: Path) -> None:
    from vidbench.audit.page import render

    document = {
        "items": [
            {
                "id": "<b>x</b>",
                "gold": "A",
                "difficulty": None,
                "discrimination": None,
                "flags": [
                    {"kind": "easy", "score": 1.0, "reason": "<img src=x>", "suggested": None}
                ],
            }
        ],
        "models": [],
        "summary": {
            "task": "t<script>",
            "items": 1,
            "models": 0,
            "blind_models": 0,
            "flagged_items": 1,
            "flags": dict.fromkeys(["gold", "blind", "chance", "easy", "negative", "duplicate"], 0),
            "position_bias": {"gold": None},
            "sizing": {},
            "item_model": {"library": "mirt", "model": "2PL", "fitted": False},
            "notes": [],
        },
    }
    page = render(document, {"<b>x</b>": "<script>alert(1)</script>"})
    assert "<script" not in page and "<img" not in page and "<b>x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_bad_input_is_refused(
    audited: tuple[Path, list[Path], dict], tmp_path: Path, capsys
) -> None:
    _, runs, _ = audited
    assert vidbench("audit", runs[0], "--out", tmp_path / "a") == 2
    assert "at least two runs" in capsys.readouterr().err
    assert vidbench("audit", runs[0], tmp_path / "nothing", "--out", tmp_path / "a") == 2
    assert "no such results directory" in capsys.readouterr().err
    assert vidbench("audit", *runs) == 2
    (tmp_path / "file").write_text("")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for target in (tmp_path / "file", loop):  # named, not a FileExistsError traceback
        assert vidbench("audit", *runs[:3], "--out", target) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"--out {target}: not a folder (a file or a broken link is in the way)" in err
    assert vidbench("audit", "--plan", "100", runs[0]) == 2
    assert vidbench("audit", *runs[:3], "--out", tmp_path / "a", "--accuracy", "0.5") == 2
    assert "give them with --plan N" in " ".join(capsys.readouterr().err.split())


def test_a_folder_of_runs_stands_for_its_runs(
    audited: tuple[Path, list[Path], dict], tmp_path: Path
) -> None:
    root, runs, document = audited
    assert vidbench("audit", root / "runs", "--out", tmp_path / "a", "--no-duplicates") == 0
    again = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert sorted(m["path"] for m in again["models"]) == sorted(str(run) for run in runs)
    assert again["items"] == document["items"]
    # a --runs N folder (its results.json the mean of run-1..N) stands for its runs
    repeated = tmp_path / "repeated"
    args = ["run", f"custom:{root / 'bench'}", "--model", "random", "--runs", "2"]
    assert vidbench(*args, "--out", repeated) == 0
    assert vidbench("audit", repeated, runs[0], "--out", tmp_path / "b", "--no-duplicates") == 0
    models = json.loads((tmp_path / "b" / "audit.json").read_text())["models"]
    assert [m["path"] for m in models] == [str(repeated / "run-1"), str(repeated / "run-2"),
                                           str(runs[0])]  # fmt: skip


def test_runs_on_other_data_are_named(
    audited: tuple[Path, list[Path], dict], tmp_path: Path, capsys
) -> None:
    from audit_support import ROWS, TOML
    from custom_support import make_bench

    root, runs, _ = audited
    other = make_bench(tmp_path / "other", toml=TOML, rows=ROWS)
    run = tmp_path / "other-run"
    assert vidbench("run", f"custom:{other}", "--model", "random", "--out", run) == 0
    capsys.readouterr()
    assert vidbench("audit", *runs[:2], run, "--out", tmp_path / "a") == 2
    err = " ".join(capsys.readouterr().err.split())
    bench = (root / "bench").resolve()
    assert f"different data ({bench}: {runs[0]}, {runs[1]}; {other.resolve()}: {run})" in err


def test_one_run_given_twice_is_refused(
    audited: tuple[Path, list[Path], dict], tmp_path: Path, capsys
) -> None:
    # counted twice, its answers would vote twice on every gold
    _, runs, _ = audited
    again = tmp_path / "again"
    again.symlink_to(runs[0])
    assert vidbench("audit", *runs[:3], again, "--out", tmp_path / "a") == 2
    err = " ".join(capsys.readouterr().err.split())  # Rich wraps lines
    assert f"the run {again} is given twice (as {runs[0]} and {again})" in err
    assert not (tmp_path / "a").exists()


def test_models_of_the_same_name_keep_their_own_figures(
    audited: tuple[Path, list[Path], dict], tmp_path: Path
) -> None:
    root, runs, _ = audited
    bench = root / "bench"
    same = []
    for name in ("sees5", "always-a"):  # two models both named "same", in folders named "run"
        out = tmp_path / name / "run"
        model = f"predictions:{root / f'{name}.jsonl'}"
        assert (
            vidbench(
                "run", f"custom:{bench}", "--model", model, "--model-opt", "name=same", "--out", out
            )
            == 0
        )
        same.append(out)
    assert vidbench("audit", *same, runs[0], "--out", tmp_path / "a", "--no-duplicates") == 0
    models = json.loads((tmp_path / "a" / "audit.json").read_text())["models"]
    labels = [m["model"] for m in models]
    assert labels[:2] == [f"predictions:same ({same[0]})", f"predictions:same ({same[1]})"]
    always_a = models[1]["position_bias"]
    assert always_a["shares"] == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}
    assert models[0]["position_bias"]["shares"]["A"] < 0.5


def test_runs_over_other_items_are_named_or_refused(
    audited: tuple[Path, list[Path], dict], tmp_path: Path, capsys
) -> None:
    _, runs, _ = audited
    parts = []
    for k, run in enumerate(runs[:3]):  # each run keeps its own ten rows (a run cut short)
        part = tmp_path / run.name
        shutil.copytree(run, part)
        rows = (run / "samples.jsonl").read_text().splitlines(keepends=True)
        (part / "samples.jsonl").write_text("".join(rows[10 * k : 10 * k + 10]))
        parts.append(part)
    assert vidbench("audit", *parts, "--out", tmp_path / "a", "--no-duplicates") == 2
    err = " ".join(capsys.readouterr().err.split())  # Rich wraps lines
    assert "the runs have no item in common (30 item(s) in all" in err
    assert vidbench("audit", parts[0], *runs[1:3], "--out", tmp_path / "a", "--no-duplicates") == 0
    notes = json.loads((tmp_path / "a" / "audit.json").read_text())["summary"]["notes"]
    assert any(
        note.startswith("predictions:sees0 has a graded answer on 10 of the 40 items")
        for note in notes
    )
    (parts[1] / "samples.jsonl").write_text("")
    assert vidbench("audit", parts[1], *runs[2:4], "--out", tmp_path / "b") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{parts[1]} has no graded answer on these items (0 row(s)" in err
    # rows without a grade (the answers failed): the same, said with its count of rows
    rows = (runs[1] / "samples.jsonl").read_text()
    for kind in ('"kind":"correct","reason":null', '"kind":"wrong","reason":null'):
        rows = rows.replace(kind, '"kind":"unscored","reason":"no-answer"')
    (parts[1] / "samples.jsonl").write_text(rows)
    assert vidbench("audit", parts[1], *runs[2:4], "--out", tmp_path / "b") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{parts[1]} has no graded answer on these items (40 row(s), none right" in err


def _three_runs(root: Path) -> tuple[Path, list[Path]]:
    """A benchmark of its own (the test changes its data) and three seeing runs of it."""
    from audit_support import ROWS, TOML, seeing_answer
    from custom_support import make_bench, predictions

    bench = make_bench(root / "bench", toml=TOML, rows=ROWS)
    runs = []
    for m in range(3):
        given = {row["n"]: seeing_answer(m, i) for i, row in enumerate(ROWS)}
        model = predictions(root / f"m{m}.jsonl", given)
        runs.append(root / f"m{m}")
        assert vidbench("run", f"custom:{bench}", "--model", model, "--out", runs[-1]) == 0
    return bench, runs


def test_rows_the_data_no_longer_has_are_named(tmp_path: Path) -> None:
    from audit_support import ROWS
    from custom_support import write_rows

    bench, runs = _three_runs(tmp_path)
    # the data changes after the runs: q05 removed, q07 renamed
    rows = [dict(row, n="q07x") if row["n"] == "q07" else row for row in ROWS if row["n"] != "q05"]
    write_rows(bench / "questions.jsonl", rows)
    assert vidbench("audit", *runs, "--out", tmp_path / "a", "--no-duplicates") == 0
    document = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert len(document["items"]) == 38
    notes = document["summary"]["notes"]
    assert any(
        n.startswith("2 item(s) the runs answered are no longer in the data (e.g. q05)")
        for n in notes
    )
    assert "1 item(s) of the data no run answered (e.g. q07x): not audited" in notes


def test_runs_scored_against_different_golds_are_refused(tmp_path: Path, capsys) -> None:
    # q03's gold fixed, one run scored again: its right and wrong disagree with the others'
    from audit_support import ROWS
    from custom_support import write_rows

    bench, runs = _three_runs(tmp_path)
    rows = [dict(row, answer="B") if row["n"] == "q03" else row for row in ROWS]
    write_rows(bench / "questions.jsonl", rows)
    model = f"predictions:{tmp_path / 'm0.jsonl'}"
    assert vidbench("run", f"custom:{bench}", "--model", model, "--out", runs[0]) == 0
    capsys.readouterr()
    assert vidbench("audit", *runs, "--out", tmp_path / "a", "--no-duplicates") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the runs were scored against different golds of q03" in err
    assert f"the data has B): score {runs[1]}, {runs[2]} again" in err
    for run in runs[1:]:
        assert vidbench("run", f"custom:{bench}", "--model", model, "--out", run) == 0
    assert vidbench("audit", *runs, "--out", tmp_path / "a", "--no-duplicates") == 0


@pytest.mark.slow
def test_near_duplicates_by_the_caption_metrics_sentence_model(tmp_path: Path) -> None:
    from audit_support import ROWS, TOML
    from custom_support import make_bench

    rows = [dict(row) for row in ROWS]
    for i, row in enumerate(rows):  # distinct questions, then one reworded copy
        row["question"] = f"Which {THINGS[i % 8]} does person {chr(65 + i % 26)} move in scene {i}?"
    rows[31]["question"] = "In this scene, " + rows[30]["question"].lower()
    rows[31]["options"] = rows[30]["options"]
    bench = make_bench(tmp_path / "bench", toml=TOML, rows=rows)
    _, runs = make_runs(tmp_path, bench)
    assert vidbench("audit", *runs[:3], "--out", tmp_path / "audit") == 0
    document = json.loads((tmp_path / "audit" / "audit.json").read_text())
    found = _flagged(document, "duplicate")
    assert "near duplicate of q31" in found["q30"]["reason"]
    assert "near duplicate of q30" in found["q31"]["reason"]
    # the reworded copy is the closest pair; any other flag is a pair of these templated
    # questions that differ in a name and a number
    assert found["q30"]["score"] == max(flag["score"] for flag in found.values()) >= 0.93
    assert len(found) <= 6


THINGS = ["cup", "ladder", "kite", "bucket", "violin", "basket", "lamp", "rope"]


def test_without_the_sentence_model_the_rest_is_audited(
    audited: tuple[Path, list[Path], dict], tmp_path: Path
) -> None:
    _, runs, document = audited
    missing = tmp_path / "no-such-model"
    args = ["audit", *runs, "--out", tmp_path / "a", "--sbert-model", missing]
    assert vidbench(*args) == 0
    again = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert any(
        note.startswith("the near-duplicate search was not run: SBERT model")
        for note in again["summary"]["notes"]
    )
    assert again["items"] == document["items"]
