"""`vidbench score-captions`: every automatic metric, the Human row, and bad input."""

from __future__ import annotations

import codecs
import csv
import json
from pathlib import Path

import pytest

from vidbench.benchmarks.fourd.captions.rows import held_out
from vidbench.benchmarks.fourd.captions.table import COLUMNS
from vidbench.cli import main
from vidbench.core.errors import EXIT_CONFIG, EXIT_INCOMPLETE
from vidbench.testing.tiny_bert import tiny_bert

UIDS = [f"{i:032x}" for i in range(6)]


def _refs(uid: str) -> list[str]:
    n = int(uid, 16)
    return [
        f"A {('red', 'blue', 'green', 'pink', 'gray', 'cyan')[n]} sphere rolls left, version {k}."
        for k in range(1, 6)
    ]


def _write(tmp_path: Path) -> tuple[Path, Path]:
    refs = tmp_path / "human_annotations.csv"
    with refs.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["folder_name", *(f"caption_{k}" for k in range(1, 6))])
        for uid in UIDS:
            writer.writerow([uid, *_refs(uid)])
        writer.writerow(["e" * 32, "only", "", "three", "of", "five"])  # missing references
    with refs.open("ab") as f:
        f.write(b"f" * 32 + b",caf\xe9 cube,b,c,d,e\n")  # not UTF-8: that object is skipped
    pred = tmp_path / "pred.jsonl"
    lines = [
        json.dumps({"uid": u, "caption": f"a sphere rolls to the left {i}"}).encode()
        for i, u in enumerate(UIDS[:4])
    ]
    lines += [
        json.dumps({"uid": UIDS[4], "caption": "  "}).encode(),  # empty caption
        b'{"uid": "' + UIDS[5].encode() + b'", "caption": "caf\xe9"}',  # not UTF-8
        json.dumps({"uid": "0" * 31 + "z", "caption": "a cube"}).encode(),  # unknown uid
        json.dumps({"uid": "e" * 32, "caption": "a cube"}).encode(),  # references unusable
        b"{not json",
    ]
    pred.write_bytes(b"\n".join(lines) + b"\n")
    return pred, refs


@pytest.mark.slow
def test_score_captions_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, refs = _write(tmp_path)
    bert = tiny_bert(
        tmp_path / "bert", ["a", "red", "blue", "sphere", "rolls", "left", "to", "the", "version"]
    )
    out = tmp_path / "out" / "SCORES.json"
    code = main(
        [
            "--no-progress",
            "score-captions",
            "--pred",
            str(pred),
            "--refs",
            str(refs),
            "--out",
            str(out),
            "--human",
            "--bert-model",
            str(bert),
            "--bert-layers",
            "2",
            "--protocol",
            "official",
        ]
    )
    assert code == EXIT_INCOMPLETE  # the bad rows leave objects out
    result = json.loads(out.read_text())
    assert list(result["columns"]) == list(COLUMNS) == result["column_order"]
    model, human = result["rows"]["model"], result["rows"]["human"]
    assert model["n_objects"] == 4 and human["n_objects"] == 6
    for row in (model, human):
        assert all(row["columns"][c] is not None for c in COLUMNS[:6])
        assert all(row["columns"][c] is None for c in COLUMNS[6:])
        assert 0 < row["columns"]["SBERT"] <= 100
    assert result["judge"] == {"used": False, "why": "no --judge given: GPT columns empty"}
    skipped = result["inputs"]["skipped"]
    assert skipped["predictions"] == {
        "empty_caption": 1,
        "not_utf8": 1,
        "unknown_uid": 1,
        "missing_references": 1,
        "malformed": 1,
        "no_prediction": 1,  # UIDS[5]: its only line is not UTF-8
    }
    assert skipped["references"] == {"missing_references": 1, "not_utf8": 1}
    assert result["inputs"]["n_scored"] == 4
    assert (
        "references of the 6 objects of the data, scored or not"
        in model["metric_info"]["cider_document_frequencies"]
    )
    assert model["per_object"][0]["uid"] == UIDS[0] and "bleu_1" in model["per_object"][0]
    printed = capsys.readouterr()
    assert "caption_1 is not UTF-8 (byte 0xe9)" in " ".join((printed.out + printed.err).split())
    assert "Human" in printed.out


def test_each_object_holds_out_one_caption_by_a_seeded_draw() -> None:
    chosen = held_out(UIDS, seed=7)
    assert set(chosen) == set(UIDS) and all(1 <= k <= 5 for k in chosen.values())
    assert held_out(UIDS, seed=7) == chosen and held_out(UIDS, seed=8) != chosen
    assert held_out(list(reversed(UIDS)), seed=7) == chosen  # drawn over the uids in sorted order


@pytest.mark.slow
def test_java_and_wordnet_are_found_before_any_caption_is_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, refs = _write(tmp_path)
    out = tmp_path / "out" / "SCORES.json"
    args = ["--no-progress", "score-captions", "--pred", str(pred), "--refs", str(refs)]
    monkeypatch.setenv("PATH", str(tmp_path / "no-java-here"))
    assert main([*args, "--out", str(out), "--metrics", "bleu,cider"]) == EXIT_CONFIG
    assert "need Java" in capsys.readouterr().err
    broken = tmp_path / "old-java"
    broken.mkdir()
    (broken / "java").write_text("#!/bin/sh\necho UnsupportedClassVersionError >&2\nexit 1\n")
    (broken / "java").chmod(0o755)
    monkeypatch.setenv("PATH", str(broken))
    coco = ["--metrics", "bleu,meteor", "--protocol", "coco"]
    assert main([*args, "--out", str(out), *coco]) == EXIT_CONFIG
    assert "UnsupportedClassVersionError" in capsys.readouterr().err
    monkeypatch.setenv("VIDBENCH_WORDNET", str(tmp_path / "no-wordnet"))
    assert main([*args, "--out", str(out), "--metrics", "bleu,meteor"]) == EXIT_CONFIG
    assert "needs WordNet 3.0" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "out").exists()  # stopped before any row was scored


def test_objects_without_a_prediction_leave_the_scores_incomplete(tmp_path: Path) -> None:
    _, refs = _write(tmp_path)
    pred = tmp_path / "two.jsonl"
    lines = [json.dumps({"uid": u, "caption": "a sphere rolls"}) for u in UIDS[:2]]
    cut = json.dumps({"uid": UIDS[2], "caption": "a sphere \ud83d"})  # an emoji cut in half
    # saved by Notepad: a BOM and CRLF line ends
    pred.write_bytes(codecs.BOM_UTF8 + ("\r\n".join([*lines, cut]) + "\r\n").encode())
    out = tmp_path / "out" / "SCORES.json"
    args = ["--pred", str(pred), "--refs", str(refs), "--out", str(out), "--metrics", "bleu"]
    assert main(["--no-progress", "score-captions", *args]) == EXIT_INCOMPLETE
    result = json.loads(out.read_text())
    assert result["inputs"]["skipped"]["predictions"] == {"not_utf8": 1, "no_prediction": 3}
    assert result["inputs"]["n_predictions_read"] == 3 and result["inputs"]["n_scored"] == 2
    assert result["rows"]["model"]["errors_by_status"]["no_prediction"] == 3
    assert f"{UIDS[5]}: no usable prediction" in " ".join(result["inputs"]["skipped_details"])


def test_a_captions_cider_does_not_depend_on_which_other_objects_are_scored(
    tmp_path: Path,
) -> None:
    words = ("red", "blue", "cube", "ball", "spins", "rolls", "jumps", "left", "right")
    words += ("slowly", "fast", "small", "big")
    refs = tmp_path / "refs.csv"
    with refs.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["folder_name", *(f"caption_{k}" for k in range(1, 6))])
        for n, uid in enumerate(UIDS):
            writer.writerow(
                [uid, *(f"a {words[(n * k) % 13]} {words[(n + k) % 13]}" for k in range(5))]
            )
    captions = [
        json.dumps({"uid": u, "caption": f"a {words[n]} {words[n + 1]}"})
        for n, u in enumerate(UIDS)
    ]
    cider = []
    for name, lines in (("all", captions), ("two", captions[:2])):
        pred = tmp_path / f"{name}.jsonl"
        pred.write_text("\n".join(lines) + "\n")
        out = tmp_path / name / "SCORES.json"
        args = ["--pred", str(pred), "--refs", str(refs), "--out", str(out), "--metrics", "cider"]
        main(["--no-progress", "score-captions", *args])
        rows = json.loads(out.read_text())["rows"]["model"]
        cider.append([o["cider"] for o in rows["per_object"][:2]])
        source = rows["metric_info"]["cider_document_frequencies"]
    assert cider[0] == pytest.approx(cider[1], abs=1e-12) and cider[0][0] > 0
    assert source.startswith("references of the 6 objects of the data, scored or not")


def test_metrics_naming_nothing_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, refs = _write(tmp_path)
    out = tmp_path / "out" / "SCORES.json"
    args = ["--pred", str(pred), "--refs", str(refs), "--out", str(out), "--metrics", " , "]
    assert main(["--no-progress", "score-captions", *args]) == EXIT_CONFIG
    assert "names no metric; known: bleu" in capsys.readouterr().err
    assert not out.exists()
