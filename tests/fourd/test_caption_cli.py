"""`vidbench score-captions`: every automatic metric, the Human row, and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from vidbench.benchmarks.fourd.captions.rows import held_out
from vidbench.benchmarks.fourd.captions.table import COLUMNS
from vidbench.cli import main
from vidbench.core.errors import EXIT_INCOMPLETE
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
    }
    assert skipped["references"] == {"missing_references": 1, "not_utf8": 1}
    assert result["inputs"]["n_scored"] == 4
    assert (
        "references of the 4 scored objects" in model["metric_info"]["cider_document_frequencies"]
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
