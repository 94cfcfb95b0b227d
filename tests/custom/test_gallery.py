"""The gallery (docs/custom-gallery.md): each public set's published layout, written by the
tests exactly so, read by its benchmark.toml without converting it, run end to end with replies
whose accuracy is worked out by hand (gallery.py). The page shows the same files."""

from __future__ import annotations

from pathlib import Path

import pytest
from gallery import GALLERY, PAGE, Entry, replies_file, write_entry

from custom_support import results, vidbench


@pytest.mark.parametrize("entry", GALLERY, ids=lambda e: e.name)
def test_gallery_entry(entry: Entry, tmp_path: Path) -> None:
    folder = write_entry(entry, tmp_path)
    assert vidbench("validate", "custom", folder) == 0
    out = tmp_path / "run"
    model = f"predictions:{replies_file(entry, tmp_path / 'answers.jsonl')}"
    assert vidbench("run", f"custom:{folder}", "--model", model, "--out", out) == 0
    found = results(out)
    assert found["columns"] == pytest.approx(entry.columns)
    assert found["errors"] == 0 and found["scoring"]["no_gold"] == entry.no_gold


@pytest.mark.parametrize("entry", GALLERY, ids=lambda e: e.name)
def test_the_page_shows_the_tested_files(entry: Entry) -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert f"cat > {entry.name}/benchmark.toml <<'EOF'\n{entry.toml}EOF\n" in page
    for name, text in entry.files.items():
        assert f"cat > {entry.name}/{name} <<'EOF'\n{text}EOF\n" in page, name
