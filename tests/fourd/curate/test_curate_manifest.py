"""Manifests of assets: missing files, duplicate uids and malformed lines are named, not fatal."""

from __future__ import annotations

import json

from vidbench.benchmarks.fourd.curate.manifest import read_manifest


def test_bad_entries_named_with_uid_and_file(tmp_path) -> None:
    (tmp_path / "a.glb").write_bytes(b"x")
    (tmp_path / "b.glb").write_bytes(b"x")
    (tmp_path / "c.txt").write_text("x")
    lines = [
        {"uid": "a", "path": "a.glb"},
        {"uid": "a", "path": "b.glb"},
        {"uid": "gone", "path": "gone.glb"},
        {"uid": "c", "path": "c.txt"},
        {"path": "b.glb"},
    ]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    assets, problems = read_manifest(manifest)
    assert [a.uid for a in assets] == ["a"]
    found = {(p.uid, p.reason) for p in problems}
    assert ("a", "duplicate uid") in found and ("gone", "missing file") in found
    assert ("c", "unsupported format") in found
    assert sum(p.reason == "malformed entry" for p in problems) == 2
    assert any(p.file.endswith("gone.glb") for p in problems)


def test_uid_to_path_mapping(tmp_path) -> None:
    (tmp_path / "x.glb").write_bytes(b"x")
    manifest = tmp_path / "objects.json"
    manifest.write_text(json.dumps({"x1": str(tmp_path / "x.glb")}))
    assets, problems = read_manifest(manifest)
    assert [(a.uid, a.path.name) for a in assets] == [("x1", "x.glb")] and not problems
