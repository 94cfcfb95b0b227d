"""A 4D-Bench QA release of any size, quickly: few objects, as many questions as asked for.

Load tests need hundreds of requests without writing hundreds of objects' videos, so questions
are spread over `objects` objects (keys "<uid>_motion", "<uid>_motion2", ...; the loader takes
the uid before the first '_'). Frames show a square moving over a gradient, so JPEG sizes are
those of real renders rather than of flat colour.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vidbench.core.files import write_json
from vidbench.media.encode import write_mp4

CATEGORIES = (
    ("Object Counting", "object_counting"),
    ("Temporal Relationship", "temporal_relationship"),
    ("Action", "motion"),
    ("Spatial Relationship", "spatial_relationship"),
    ("Appearance", "appearance"),
)
QA_FOLDER = "4D_Object_Question_Answering/data"


def view_frames(n: int, size: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=3).astype(np.float32)
    ramp = np.linspace(0.0, 1.0, size, dtype=np.float32)
    gradient = (ramp[None, :, None] * 0.5 + ramp[:, None, None] * 0.5) * 255.0
    background = np.clip(0.6 * gradient + 0.4 * base, 0, 255).astype(np.uint8)
    side = max(2, size // 4)
    frames = []
    for t in range(n):
        frame = background.copy()
        x = (t * max(1, size // n)) % (size - side)
        frame[size // 3 : size // 3 + side, x : x + side] = (255 - base).astype(np.uint8)
        frames.append(frame)
    return frames


def write_release(
    root: Path,
    questions: int,
    objects: int = 10,
    views: int = 24,
    frames: int = 12,
    size: int = 32,
) -> Path:
    """Write a release root with `questions` QA items over `objects` objects; returns `root`.

    Every question text is distinct (so every request is); gold answers cycle A..D.
    """
    data = root / QA_FOLDER
    uids = [f"{i:032x}" for i in range(objects)]
    for i, uid in enumerate(uids):
        for k in range(views):
            path = data / "4d_object_multi_view_videos" / uid / f"view_{k}_rgb_white_bg.mp4"
            write_mp4(path, view_frames(frames, size, seed=1000 * i + k))
    qa: dict[str, dict[str, object]] = {}
    for q in range(questions):
        uid = uids[q % objects]
        category, suffix = CATEGORIES[(q // objects) % len(CATEGORIES)]
        round_ = q // (objects * len(CATEGORIES))
        key = f"{uid}_{suffix}" + (str(round_ + 1) if round_ else "")
        qa[key] = {
            "Question": f"Question {q}: what happens to object {q % objects}?",
            "Options": [f"({letter}) option {letter} of question {q}" for letter in "ABCD"],
            "Answer index": q % 4 + 1,
            "Category": category,
        }
    write_json(data / "4d_qa.json", qa, indent=1)
    return root
