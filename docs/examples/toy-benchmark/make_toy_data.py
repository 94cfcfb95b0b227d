"""Write a small toy data folder: clips of one white shape each (a square, a disk or a
triangle) on black, and toy_questions.json asking which shape each clip holds.

    python make_toy_data.py DATA [--broken]

`--broken` adds a row whose video is missing, which `vidbench validate toy DATA` names.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vidbench.media.encode import write_mp4

SIZE = 32
OPTIONS = ["cube", "ball", "cone"]  # what the shapes stand for, in the options' order
CLIPS = ["cube", "ball", "cone", "cube"]


def shape_frame(shape: str, shift: int) -> np.ndarray:
    y, x = np.mgrid[:SIZE, :SIZE]
    x = x - shift  # the shape drifts right from frame to frame
    if shape == "cube":
        inside = (abs(x - 12) < 6) & (abs(y - 16) < 6)
    elif shape == "ball":
        inside = (x - 12) ** 2 + (y - 16) ** 2 < 36
    else:
        inside = (y > 10) & (y < 22) & (abs(x - 12) < (y - 10) / 2)
    frame = np.zeros((SIZE, SIZE, 3), np.uint8)
    frame[inside] = 255
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder to write")
    parser.add_argument("--broken", action="store_true", help="add a row without its video")
    args = parser.parse_args()
    rows = []
    for i, shape in enumerate(CLIPS):
        video = f"videos/clip{i}.mp4"
        write_mp4(args.data / video, [shape_frame(shape, t) for t in range(8)])
        answer = "ABC"[OPTIONS.index(shape)]
        rows.append(
            {
                "id": f"q{i}",
                "question": "Which shape is in the clip?",
                "options": OPTIONS,
                "answer": answer,
                "shape": shape,
                "video": video,
            }
        )
    if args.broken:
        rows.append({**rows[0], "id": "q-broken", "video": "videos/missing.mp4"})
    (args.data / "toy_questions.json").write_text(json.dumps(rows, indent=1))
    print(f"wrote {len(rows)} questions to {args.data}")


if __name__ == "__main__":
    main()
