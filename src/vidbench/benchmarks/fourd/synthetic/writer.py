"""Writing a procedural 4D-Bench dataset in the official release layout."""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from vidbench.benchmarks.fourd.loader import QARecord
from vidbench.benchmarks.fourd.synthetic.captions import captions
from vidbench.benchmarks.fourd.synthetic.drafting import NoQuestion
from vidbench.benchmarks.fourd.synthetic.questions import build_questions, gold_positions
from vidbench.benchmarks.fourd.synthetic.render import scene_states, view_frames
from vidbench.benchmarks.fourd.synthetic.sample import sample_scene
from vidbench.benchmarks.fourd.synthetic.scene import Scene, check_visible
from vidbench.core.files import make_folder, write_json
from vidbench.media.encode import write_mp4

QA_DATA = Path("4D_Object_Question_Answering") / "data"
CAPTION_DATA = Path("4D_Object_Captioning") / "data"
VIDEOS = "4d_object_multi_view_videos"
QA_FILE = "4d_qa.json"
CAPTION_FILE = "human_annotations.csv"
MAX_ATTEMPTS = 50


def video_name(view: int) -> str:
    """File name of one view's video."""
    return f"view_{view}_rgb_white_bg.mp4"


VIEW_VIDEOS = video_name(0).replace("0", "*", 1)  # view_*_rgb_white_bg.mp4: any view's video


def object_views(folder: Path) -> list[int]:
    """The views an object folder holds videos of, in order."""
    stems = (p.name.removeprefix("view_").split("_", 1)[0] for p in folder.glob(VIEW_VIDEOS))
    return sorted(int(k) for k in stems if k.isdigit())


def build_object(seed: int, index: int) -> tuple[Scene, dict[str, QARecord], list[str]]:
    """Scene, questions and captions of object ``index`` (redraws scenes that lack a question)."""
    positions = gold_positions(seed, index)
    for attempt in range(MAX_ATTEMPTS):
        scene = sample_scene(seed, index, attempt)
        try:
            rng = np.random.default_rng([seed, index, attempt, 0x51])
            qa = build_questions(scene, rng, positions)
        except NoQuestion:
            continue
        return scene, qa, captions(scene)
    raise RuntimeError(f"no complete question set for seed={seed} object={index}")


def render_object(scene: Scene, folder: Path, views: int, frames: int, size: int, fps: int) -> str:
    """Encode every view of ``scene`` into ``folder``, and remove the videos of views past
    ``views`` an earlier run left there (a task would read them as this object's); returns the
    uid."""
    states = scene_states(scene.parts, frames)
    for view in range(views):
        write_mp4(folder / video_name(view), view_frames(scene, view, views, size, states), fps=fps)
    for view in object_views(folder):
        if view >= views:
            (folder / video_name(view)).unlink()
    return scene.uid


def _foreign_objects(qa_videos: Path, uids: set[str]) -> list[str]:
    """The object folders in ``qa_videos`` that are not this dataset's."""
    if not qa_videos.is_dir():
        return []
    return sorted(p.name for p in qa_videos.iterdir() if p.is_dir() and p.name not in uids)


def link_videos(qa_videos: Path, caption_data: Path) -> None:
    """Point the captioning folder's videos at the QA videos with a relative symlink."""
    link = caption_data / VIDEOS
    if link.is_symlink():
        link.unlink()
    elif link.exists():
        raise FileExistsError(f"{link} exists and is not a symlink; remove it first")
    link.symlink_to(os.path.relpath(qa_videos, caption_data), target_is_directory=True)


def generate(
    out: Path,
    objects: int = 20,
    seed: int = 0,
    views: int = 24,
    frames: int = 48,
    size: int = 128,
    fps: int = 24,
    workers: int | None = None,
    progress: bool = False,
) -> Path:
    """Write a procedural 4D-Bench dataset (QA json, captions csv, multi-view mp4s) under ``out``.

    The output is deterministic for a seed. Returns ``out``, the release root holding
    ``4D_Object_Question_Answering/data`` and ``4D_Object_Captioning/data``; the captioning
    folder's ``4d_object_multi_view_videos`` is a relative symlink to the QA one.
    """
    for name, value, low in (
        ("objects", objects, 1),
        ("views", views, 1),
        ("frames", frames, 1),
        ("size", size, 8),
        ("fps", fps, 1),
    ):
        if value < low:
            raise ValueError(f"{name} must be >= {low}, got {value}")
    check_visible(frames)  # every question answerable from the official input's frames
    out = make_folder(Path(out))
    qa_data, caption_data = out / QA_DATA, out / CAPTION_DATA
    qa_videos = qa_data / VIDEOS
    built = [build_object(seed, i) for i in range(objects)]
    foreign = _foreign_objects(qa_videos, {scene.uid for scene, _, _ in built})
    if foreign:  # 4d_qa.json would leave them out, while a folder listing finds them
        raise ValueError(
            f"{qa_videos} holds {len(foreign)} object folder(s) this dataset does not have "
            f"(e.g. {foreign[0]}; another --objects or --seed made them): give an empty --out, "
            "or remove them"
        )
    jobs = [(scene, qa_videos / scene.uid) for scene, _, _ in built]
    n_workers = max(1, min(workers or os.cpu_count() or 1, objects))
    with contextlib.ExitStack() as stack:
        if n_workers > 1:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=n_workers))
            futures = [pool.submit(render_object, s, f, views, frames, size, fps) for s, f in jobs]
            done: Iterable[str] = (fut.result() for fut in as_completed(futures))
        else:
            done = (render_object(s, f, views, frames, size, fps) for s, f in jobs)
        bar, task = None, None
        if progress:  # started after the pool, so no worker is forked while its thread runs
            from rich.progress import Progress

            bar = stack.enter_context(Progress())
            task = bar.add_task("Rendering 4D objects", total=objects)
        for _ in done:
            if bar is not None and task is not None:
                bar.advance(task)

    qa_data.mkdir(parents=True, exist_ok=True)
    qa: dict[str, QARecord] = {}
    for _, entries, _ in built:
        qa.update(entries)
    write_json(qa_data / QA_FILE, qa)
    caption_data.mkdir(parents=True, exist_ok=True)
    with open(caption_data / CAPTION_FILE, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["folder_name"] + [f"caption_{i}" for i in range(1, 6)])
        for scene, _, caps in built:
            writer.writerow([scene.uid, *caps])
    link_videos(qa_videos, caption_data)
    return out
