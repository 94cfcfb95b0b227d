"""`vidbench validate 4dbench DIR` lists every problem, with uid and path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vidbench.cli import main


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
