"""The small messages of `curate 4d`: a funnel folder that is not there, manifest lines that are
not JSON, a missing asset's resolved path, and manifest problems told apart from failed renders
(a rerun does not help them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vidbench.benchmarks.fourd.curate.manifest import read_manifest
from vidbench.benchmarks.fourd.curate.quality import read_labels
from vidbench.cli import main
from vidbench.report.funnel import StageCount, record_stage


def test_funnel_of_a_folder_that_is_not_there_or_has_no_funnel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["curate", "4d", "funnel", str(tmp_path / "nonexist")]) == 2
    assert "no such folder" in " ".join(capsys.readouterr().err.split())
    assert main(["curate", "4d", "funnel", str(tmp_path)]) == 2
    assert "no funnel.json" in " ".join(capsys.readouterr().err.split())


def test_manifest_problems_say_what_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.glb").write_bytes(b"x")
    lines = ['{"uid": "a", "path": "a.glb"}', "not json at all", '["a", "list"]',
             '{"uid": "gone", "path": "gone.glb"}', '{"path": "a.glb"}']  # fmt: skip
    (tmp_path / "assets" / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    _, problems = read_manifest(Path("assets/manifest.jsonl"))  # relative, as typed
    messages = [p.message() for p in problems]
    assert not any("None" in m for m in messages), messages
    assert "malformed entry: assets/manifest.jsonl:2: malformed JSON" in messages[0]
    assert "not a JSON object" in messages[1] and "manifest.jsonl:3" in messages[1]
    gone = next(m for m in messages if m.startswith("gone"))
    assert str((tmp_path / "assets" / "gone.glb").resolve()) in gone  # where it was looked for
    assert "needs uid and path (has path 'a.glb')" in messages[-1]


def test_a_manifest_entry_that_is_not_text_costs_that_entry(tmp_path: Path) -> None:
    """A byte that is not UTF-8 in one entry (a .jsonl line, a .json member): that entry is a
    problem named by its line, the others are read."""
    (tmp_path / "a.glb").write_bytes(b"x")
    (tmp_path / "b.glb").write_bytes(b"x")
    lines = [b'{"uid": "a", "path": "a.glb"}', b'{"uid": "caf\xe9", "path": "b.glb"}']
    (tmp_path / "manifest.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assets, problems = read_manifest(tmp_path / "manifest.jsonl")
    assert [a.uid for a in assets] == ["a"]
    assert [p.message() for p in problems] == [
        f"malformed entry: {tmp_path / 'manifest.jsonl'}:2: not UTF-8 text (byte 13)"
    ]
    mapping = b'{\n "a": "a.glb",\n "caf\xe9": "b.glb"\n}\n'
    (tmp_path / "manifest.json").write_bytes(mapping)
    assets, problems = read_manifest(tmp_path / "manifest.json")
    assert [a.uid for a in assets] == ["a"]
    assert [p.message() for p in problems] == [
        f"malformed entry: {tmp_path / 'manifest.json'}:3: not UTF-8 text "
        "(byte 0xe9 at line 3, column 6)"
    ]


@pytest.mark.slow
def test_render_summary_tells_manifest_problems_from_failed_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("bpy")
    (tmp_path / "a.glb").write_bytes(b"x")
    lines = [{"uid": "gone", "path": "gone.glb"}, {"uid": "b", "path": "a.glb"},
             {"uid": "b", "path": "a.glb"}]  # fmt: skip
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out"
    # `b` is rendered (and fails: not a glTF); `gone` and the second `b` are the manifest's
    assert main(["--no-progress", "curate", "4d", "render", str(manifest), "--out", str(out),
                 "--size", "16", "--views", "2", "--max-frames", "4"]) == 3  # fmt: skip
    said = " ".join(capsys.readouterr().err.split())
    assert "1 failed to render (a rerun tries them again): b (" in said
    assert "2 manifest entries not usable (fix the manifest): gone (gone.glb): missing file" in said
    assert "duplicate uid" in said.split("fix the manifest")[1]
    assert "redoes" not in said


def test_quality_labels_from_a_spreadsheet(tmp_path: Path) -> None:
    """A CSV saved by a spreadsheet (byte-order mark, "High Quality") is read; a uid labelled
    twice differently, or no uid, is named (the last label won without a word)."""
    labels = tmp_path / "labels.csv"
    rows = ["uid,label", "a,High Quality", "b, textureless ", "c,high quality", "c,textureless"]
    rows += ["c,high quality", ",textureless", "d,great"]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8-sig")
    found, problems = read_labels(labels)
    assert found == {"a": 0, "b": 1}
    assert [(p.uid, p.reason, p.detail) for p in problems] == [
        ("c", "two labels", "line 5: 'textureless', and another on line 4"),
        ("c", "two labels", "line 6: 'high quality', and another on line 4"),
        ("?", "no uid", "line 7"),
        ("d", "unknown label", "line 8: 'great'"),
    ]


def test_an_output_folder_of_the_mmworld_pipeline_is_refused(tmp_path: Path) -> None:
    """`curate 4d motion --out` given `curate mmworld`'s folder: refused before any work, naming
    the other pipeline's stages (the 4D stages and its funnel would be mixed in)."""
    (tmp_path / "videos").mkdir()
    (tmp_path / "videos" / "a.mp4").write_bytes(b"")
    record_stage(tmp_path / "out", "keyframes", StageCount(1, 1))
    argv = ["curate", "4d", "motion", str(tmp_path / "videos"), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert not (tmp_path / "out" / "motion.jsonl").exists()
