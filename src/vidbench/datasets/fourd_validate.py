"""`vidbench validate 4dbench DIR`: every problem of a 4D-Bench dataset, not just the first."""

from __future__ import annotations

from pathlib import Path

from vidbench.core.errors import DataError
from vidbench.datasets import fourd_bench
from vidbench.datasets.problems import Problem, check_all
from vidbench.media.decode import probe

_LOADERS = {
    fourd_bench.QA_FILE: fourd_bench.load_qa,
    fourd_bench.CAPTION_FILE: fourd_bench.load_captions,
}


def _check_view(view: tuple[Path, str]) -> Problem | None:
    path, uid = view
    if not path.is_file():
        return Problem(uid, path, "missing view video")
    try:
        probe(path)
    except DataError as e:
        return Problem(uid, path, f"unreadable view video: {str(e).removeprefix(f'{path}: ')}")
    return None


def validate(root: Path, show_progress: bool = False) -> list[Problem]:
    """Problems in every annotation file found under `root` and in all their objects' views."""
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
            for path in sample.media.videos.values():
                views[path.resolve()] = sample.metadata["uid"]
    if not found:
        problems.append(Problem("", root, "no 4d_qa.json or human_annotations.csv found"))
    return problems + check_all(list(views.items()), _check_view, "checking views", show_progress)
