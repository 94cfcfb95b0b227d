"""`vidbench validate 4dbench DIR` lists every problem, with uid and path; a run on the same
faults names them and scores the rest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from vidbench.cli import main
from vidbench.media.encode import write_mp4


def test_clean_dataset_passes(qa_release: Path, capsys) -> None:
    assert main(["--no-progress", "validate", "4dbench", str(qa_release)]) == 0
    assert "no problems" in capsys.readouterr().err


def test_every_problem_is_listed(qa_release: Path, tmp_path: Path, capsys) -> None:
    root = tmp_path / "release"
    shutil.copytree(qa_release, root)
    data = root / "4D_Object_Question_Answering" / "data"
    videos = data / "4d_object_multi_view_videos"
    uid0, uid1 = "0" * 32, f"{1:032x}"
    (videos / uid0 / "view_3_rgb_white_bg.mp4").unlink()
    (videos / uid0 / "view_5_rgb_white_bg.mp4").unlink()
    (videos / uid1 / "view_8_rgb_white_bg.mp4").write_bytes(b"not a video at all")
    qa = json.loads((data / "4d_qa.json").read_text())
    qa[f"{uid1}_motion"]["Answer index"] = 0
    qa[f"{uid1}_appearance"]["Category"] = "Colour"
    (data / "4d_qa.json").write_text(json.dumps(qa))
    captions = root / "4D_Object_Captioning" / "data"
    captions.mkdir(parents=True)
    (captions / "4d_object_multi_view_videos").symlink_to(videos)  # the same objects' views
    (captions / "human_annotations.csv").write_text(
        "folder_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        f"{uid0},a,b,c,d,e\n{uid0},a,b,c,d,e\n"
    )

    assert main(["--no-progress", "validate", "4dbench", str(root)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    expected = [
        (f"{uid1}_motion", "'Answer index' 0 is outside 1..4", "4d_qa.json"),
        (f"{uid1}_appearance", "unknown Category 'Colour'", "4d_qa.json"),
        (uid0, "duplicate folder_name", "human_annotations.csv"),
        (uid0, "missing view video", "view_3_rgb_white_bg.mp4"),
        (uid0, "missing view video", "view_5_rgb_white_bg.mp4"),
        (uid1, "view video is unreadable", "view_8_rgb_white_bg.mp4"),
    ]
    for record, message, path in expected:
        assert any(line.startswith(f"{record}: {message}") and path in line for line in lines), (
            record,
            message,
            lines,
        )
    assert len(lines) == len(expected)
    assert "6 problem(s)" in captured.err


def test_nothing_to_validate(tmp_path: Path, capsys) -> None:
    assert main(["--no-progress", "validate", "4dbench", str(tmp_path)]) == 1
    assert "no 4d_qa.json or human_annotations.csv found" in capsys.readouterr().out


def _release_copy(qa_release: Path, tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "release"
    shutil.copytree(qa_release, root)
    return root, root / "4D_Object_Question_Answering" / "data"


def test_a_video_too_small_to_show_anything_is_named(
    qa_release: Path, tmp_path: Path, capsys
) -> None:
    """A 1x1 video (stored 2x2: H.264 needs even sides) shows a model nothing: validate lists
    it, and a run records its questions as media errors naming it instead of sending them."""
    root, data = _release_copy(qa_release, tmp_path)
    tiny = data / "4d_object_multi_view_videos" / ("0" * 32) / "view_8_rgb_white_bg.mp4"
    write_mp4(tiny, [np.full((1, 1, 3), 90, np.uint8)] * 12)
    assert main(["--no-progress", "validate", "4dbench", str(root)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [
        f"{'0' * 32}: view video is 2x2 pixels, too small to show anything (at least 16 on each "
        f"side) [{tiny.resolve()}]"
    ]
    out = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(root), "--model", "random"]
    assert main([*argv, "--out", str(out), "--cache-dir", str(tmp_path / "cache")]) == 3
    results = json.loads((out / "results.json").read_text())
    assert results["errors_by_status"] == {"media": 5}
    assert all(
        "view 8 video is 2x2 pixels, too small to show anything" in e["error"]
        and str(tiny) in e["error"]
        for e in results["error_details"]
    )


def test_one_missing_comma_costs_one_record_not_the_run(
    qa_release: Path, tmp_path: Path, capsys
) -> None:
    root, data = _release_copy(qa_release, tmp_path)
    qa_file = data / "4d_qa.json"
    text = qa_file.read_text()
    first = text.index('"Options"')
    qa_file.write_text(text[: text.rindex(",", 0, first)] + text[text.rindex(",", 0, first) + 1 :])
    assert main(["--no-progress", "validate", "4dbench", str(root)]) == 1
    assert "Expecting ',' delimiter; skipped" in capsys.readouterr().out
    out = tmp_path / "run"
    argv = ["--no-progress", "run", "4dbench-qa", "--data", str(root), "--model", "random"]
    assert main([*argv, "--out", str(out), "--cache-dir", str(tmp_path / "cache")]) == 3
    results = json.loads((out / "results.json").read_text())
    assert (results["n"], results["n_scored"], results["errors_by_status"]) == (20, 19, {"data": 1})
