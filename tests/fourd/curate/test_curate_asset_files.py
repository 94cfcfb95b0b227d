"""`curate 4d render` renders an object again when a file its asset references changed (a glTF's
external buffer or texture, an .obj's material or texture map), not only its main file; a uri
leading outside the asset's folder is not read, a data: uri is part of the main file. No Blender:
the check (render.completed) reads the render.json the worker writes with Asset.fingerprint.
Objects in OUT that the manifest does not name are said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vidbench.benchmarks.fourd.curate.asset_files import NOT_FOLLOWED, referenced
from vidbench.benchmarks.fourd.curate.manifest import Asset
from vidbench.benchmarks.fourd.curate.render import (
    OTHERS_NOTE,
    RenderJob,
    completed,
    render_manifest,
)
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.loader import RENDER_FILE
from vidbench.report.funnel import Funnel

SETTINGS = RenderSettings(views=1, size=16, max_frames=4, samples=1, threads=1)


def _rendered(asset: Asset, out: Path) -> RenderJob:
    """A render.json for `asset` as a worker leaves it (one video), and the job checking it."""
    folder = out / asset.uid
    folder.mkdir(parents=True)
    (folder / "view_0.mp4").write_bytes(b"video")
    record = {
        "uid": asset.uid,
        "asset": asset.fingerprint(),
        "settings": SETTINGS.identity(),
        "status": "rendered",
        "videos": ["view_0.mp4"],
    }
    (folder / RENDER_FILE).write_text(json.dumps(record), encoding="utf-8")
    return RenderJob(asset, {}, SETTINGS.identity(), SETTINGS.views, 0)


def _rewrite(path: Path, data: bytes) -> None:
    """New bytes of the same size, the time moved on (as an editor saving leaves it)."""
    path.write_bytes(data)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def _gltf(folder: Path, images: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "asset": {"version": "2.0"},
        "buffers": [
            {"uri": "mesh.bin", "byteLength": 4},
            {"uri": "data:application/octet-stream;base64,AAAAAA==", "byteLength": 4},
        ],
        "images": [{"uri": uri} for uri in images] + [{"bufferView": 0}],
    }
    path = folder / "thing.gltf"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (folder / "mesh.bin").write_bytes(b"\0\0\0\0")
    return path


def test_a_changed_buffer_or_texture_renders_the_gltf_again(tmp_path: Path) -> None:
    folder = tmp_path / "assets"
    path = _gltf(folder, ["tex/wood%20grain.png", "../outside.png", "https://x.org/a.png"])
    (folder / "tex").mkdir()
    (folder / "tex" / "wood grain.png").write_bytes(b"png1")
    (tmp_path / "outside.png").write_bytes(b"nope")
    asset = Asset("thing", path)
    refs = asset.fingerprint()["references"]
    assert isinstance(refs, dict)
    assert set(refs) == {"mesh.bin", "tex/wood grain.png", "../outside.png", "https://x.org/a.png"}
    assert refs["../outside.png"] == refs["https://x.org/a.png"] == NOT_FOLLOWED
    job = _rendered(asset, tmp_path / "out")
    assert completed(tmp_path / "out" / "thing", job) is not None

    _rewrite(tmp_path / "outside.png", b"NOPE")  # not the asset's: not read
    assert completed(tmp_path / "out" / "thing", job) is not None
    (folder / "mesh.bin").touch()  # touched, the same bytes
    assert completed(tmp_path / "out" / "thing", job) is not None
    _rewrite(folder / "tex" / "wood grain.png", b"png2")
    assert completed(tmp_path / "out" / "thing", job) is None

    job = _rendered(Asset("again", path), tmp_path / "out")
    _rewrite(folder / "mesh.bin", b"\0\0\0\1")
    assert completed(tmp_path / "out" / "again", job) is None


def test_a_texture_missing_when_rendered_renders_again_once_there(tmp_path: Path) -> None:
    path = _gltf(tmp_path / "assets", ["later.png"])
    job = _rendered(Asset("thing", path), tmp_path / "out")
    assert completed(tmp_path / "out" / "thing", job) is not None
    (tmp_path / "assets" / "later.png").write_bytes(b"png")
    assert completed(tmp_path / "out" / "thing", job) is None


def test_a_uri_naming_a_folder_or_holding_a_nul_does_not_render_again_each_run(
    tmp_path: Path,
) -> None:
    path = _gltf(tmp_path / "assets", ["tex/", "bad%00.png"])
    (tmp_path / "assets" / "tex").mkdir()
    refs = Asset("thing", path).fingerprint()["references"]
    assert refs == {"mesh.bin": refs["mesh.bin"], "tex": "missing", "bad%00.png": NOT_FOLLOWED}
    job = _rendered(Asset("thing", path), tmp_path / "out")
    assert completed(tmp_path / "out" / "thing", job) is not None


def test_glb_external_uris_are_read_from_its_json_chunk(tmp_path: Path) -> None:
    chunk = json.dumps({"images": [{"uri": "skin.png"}]}).encode().ljust(40)
    header = b"glTF" + (2).to_bytes(4, "little") + (20 + len(chunk)).to_bytes(4, "little")
    glb = tmp_path / "a.glb"
    glb.write_bytes(header + len(chunk).to_bytes(4, "little") + b"JSON" + chunk)
    (tmp_path / "skin.png").write_bytes(b"png")
    assert referenced(glb) == {"skin.png": (tmp_path / "skin.png").resolve()}
    (tmp_path / "broken.glb").write_bytes(b"glTF")  # truncated: the renderer says why
    assert referenced(tmp_path / "broken.glb") == {}


def test_obj_materials_and_their_texture_maps(tmp_path: Path) -> None:
    obj = tmp_path / "m.obj"
    obj.write_text("mtllib m.mtl\nv 0 0 0\n", encoding="utf-8")
    (tmp_path / "m.mtl").write_text(
        "newmtl a\nmap_Kd -s 1 1 1 -clamp on tex/diffuse map.png\nbump -bm 0.5 ../../etc.png\n",
        encoding="utf-8",
    )
    (tmp_path / "tex").mkdir()
    (tmp_path / "tex" / "diffuse map.png").write_bytes(b"png1")
    found = referenced(obj)
    assert found == {
        "m.mtl": (tmp_path / "m.mtl").resolve(),
        "tex/diffuse map.png": (tmp_path / "tex" / "diffuse map.png").resolve(),
        "../../etc.png": None,
    }
    job = _rendered(Asset("m", obj), tmp_path / "out")
    assert completed(tmp_path / "out" / "m", job) is not None
    _rewrite(tmp_path / "tex" / "diffuse map.png", b"png2")
    assert completed(tmp_path / "out" / "m", job) is None


def test_an_older_render_json_without_references_still_matches(tmp_path: Path) -> None:
    path = _gltf(tmp_path / "assets", [])
    asset = Asset("thing", path)
    job = _rendered(asset, tmp_path / "out")
    record_file = tmp_path / "out" / "thing" / RENDER_FILE
    record = json.loads(record_file.read_text(encoding="utf-8"))
    del record["asset"]["references"]
    record_file.write_text(json.dumps(record), encoding="utf-8")
    assert completed(tmp_path / "out" / "thing", job) is not None
    record["asset"]["references"] = {"a\u0000b": "missing"}  # edited by hand: not complete
    record_file.write_text(json.dumps(record), encoding="utf-8")
    assert completed(tmp_path / "out" / "thing", job) is None


def test_objects_in_out_from_another_manifest_are_named(tmp_path: Path) -> None:
    """`curate 4d qa` reads every object folder in OUT: one an earlier manifest rendered there
    (an asset since taken out of it) is said, in the summary and the funnel, not used silently."""
    pytest.importorskip("bpy")  # render_manifest's requirement; no object is rendered here
    path = _gltf(tmp_path / "assets", [])
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"uid": "thing", "path": str(path)}) + "\n")
    out = tmp_path / "out"
    _rendered(Asset("thing", path), out)  # complete: skipped
    _rendered(Asset("old", path), out)
    report = render_manifest(manifest, out, SETTINGS, progress=False, worker_command=["false"])
    assert (report.skipped, report.rendered, report.others) == (1, ["thing"], ["old"])
    assert Funnel.read(out).stages["render"].notes == {OTHERS_NOTE: 1}
