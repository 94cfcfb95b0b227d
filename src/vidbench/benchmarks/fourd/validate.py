"""`vidbench validate 4dbench DIR`: every problem of a 4D-Bench dataset, not just the first.

Each object is checked for its 24 views, or, when its folder holds the render.json of a
renderer that made only some (`synth 4d --renderer blender` renders the views its questions
need), for the videos that record lists.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.core.errors import DataError
from vidbench.media.check import video_problem
from vidbench.tasks.problems import Problem, check_all

_LOADERS = {
    fourd_bench.QA_FILE: fourd_bench.load_qa,
    fourd_bench.CAPTION_FILE: fourd_bench.load_captions,
}


def _check_view(view: tuple[Path, str], frames: int) -> Problem | None:
    path, uid = view
    if not path.is_file():
        return Problem(uid, path, "missing view video")
    problem = video_problem(path, frames)
    return None if problem is None else Problem(uid, path, f"view video {problem}")


def _rendered(folder: Path) -> set[str] | None:
    """The video names a complete render.json in ``folder`` lists; None without one."""
    try:
        record = json.loads((folder / fourd_bench.RENDER_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    videos = record.get("videos") if isinstance(record, dict) else None
    if record.get("status") != "rendered" or not isinstance(videos, list):
        return None
    return {str(v) for v in videos}


def validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    """Problems in every annotation file found under `root` and in all their objects' views
    (each must give `frames` frames, by default the official task's six per view)."""
    from vidbench.benchmarks.fourd.variants import SPEC

    check = partial(_check_view, frames=frames or SPEC.frames)
    problems: list[Problem] = []
    views: dict[Path, str] = {}
    found = False
    for filename, load in _LOADERS.items():
        try:
            fourd_bench.resolve_data_dir(root, filename)
        except DataError:
            continue
        found = True
        try:
            loaded = load(root)
        except DataError as e:
            problems.append(Problem("", root, str(e)))
            continue
        problems.extend(loaded.problems)
        for sample in loaded.items:
            paths = list(sample.media.videos.values())
            rendered = _rendered(paths[0].parent) if paths else None
            for path in paths:
                if rendered is None or path.name in rendered:
                    views[path.resolve()] = str(sample.metadata["uid"])
    if not found:
        problems.append(Problem("", root, "no 4d_qa.json or human_annotations.csv found"))
    problems += _views_nowhere(root, views)
    return problems + check_all(list(views.items()), check, "checking views", show_progress)


def _views_nowhere(root: Path, views: dict[Path, str]) -> list[Problem]:
    """One problem for each official view no object has (a dataset rendered with fewer views,
    `synth 4d --views 16`, say), before the views each object lacks."""
    from vidbench.benchmarks.fourd.variants import OFFICIAL_VIEWS

    if not views:
        return []
    present = {path.name for path in views if path.is_file()}
    official = ", ".join(map(str, OFFICIAL_VIEWS))
    return [
        Problem(
            "",
            root,
            f"no object has view {view} ({name}), which 4dbench-qa and 4dbench-caption read "
            f"(views {official}): give them --views among the views the objects have",
        )
        for view in OFFICIAL_VIEWS
        if (name := fourd_bench.view_path(Path(), "", view).name) not in present
    ]
