"""`vidbench run` as the question count grows: 1,000, 10,000 and 100,000 4D-Bench questions with
the built-in random model, each run in its own process.

    python bench/scale.py [--sizes 1000,10000,100000] [--objects 20] [--keep DIR] [--view] [--ray]
        [--declared [--declared-ids own|key|none]]

For each size it prints the wall time of `vidbench run 4dbench-qa --model random` into a new
results folder (and per question), the peak memory (maximum resident set) of that process, and a
rerun into the same folder, where every answer is reused from the store (ms per question);
with --view, the wall time and peak memory of `vidbench view` on the run too, and the seconds
until that report's first page is interactive in Debian's Chromium (bench/report.py's measure);
with --ray, the same run on a local Ray cluster of two workers (`--ray`) into another folder: its
wall time and the peak memory of the driver process (the workers are processes of their own), to
show what the driver holds as the run grows. With --declared, the questions are a declared
benchmark's instead (`custom:DIR`: a benchmark.toml and a JSONL rows file, one view of a rendered
object a question, four options, seven categories as group columns); --declared-ids says where
its ids come from: `own` (default), each row's `id` field with no `id` key in benchmark.toml;
`key`, that field named by `id = "id"`; `none`, no such field (the rows are numbered).

The data: `vidbench synth 4d` renders --objects procedural objects (32 px, 24 views, 12 frames,
five questions each) once; each size's data folder is a copy of its 4d_qa.json whose N questions
are the rendered ones repeated under new ids (`<uid>_q<k>`, so each points at one of the
rendered objects' videos, which the folder links to). The random model reads frames like any
other model (`needs_frames`), so every question's frames are prepared as usual; they come from a
frame cache private to the bench that one warm-up run fills, so every size measures the warm
path (vidbench's own cost per question, not the decoding of 20,000 objects' videos, which is
bench/frames.py's figure).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from report import first_page_s  # bench/ is on sys.path when run

QA_FILE = "4d_qa.json"
VIDEO_DIR = "4d_object_multi_view_videos"
QA_DATA = Path("4D_Object_Question_Answering") / "data"
TASK = "4dbench-qa"


@dataclass(frozen=True)
class Measured:
    wall_s: float
    peak_mb: float


def measure(command: list[str]) -> Measured:
    """Wall time and peak resident memory (the process's own maximum RSS) of a command; the
    command must succeed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-3000:]}")
    return Measured(wall, usage.ru_maxrss / 1024)  # Linux: kilobytes


CLI = "import sys; from vidbench.cli import main; sys.exit(main())"
RENDER = ["--size", "32", "--frames", "12", "--views", "24"]  # the procedural data


def vidbench(*args: str) -> list[str]:
    """The `vidbench` command of this Python (and of its PYTHONPATH, which a checkout may set)."""
    return [sys.executable, "-c", CLI, *args]


def render(root: Path, objects: int) -> Path:
    """The rendered objects' QA data folder."""
    command = vidbench("synth", "4d", "--out", str(root), "--objects", str(objects), *RENDER)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root / QA_DATA


def questions(rendered: Path, n: int, out: Path) -> Path:
    """A data folder of `n` questions: the rendered ones, repeated under new ids."""
    base = list(json.loads((rendered / QA_FILE).read_text()).items())
    out.mkdir(parents=True)
    # written as the release writes it (json.dumps(records, indent=2)), a record at a time: this
    # process stays small, since a child's peak memory counts the process it was forked from
    with (out / QA_FILE).open("w") as f:
        f.write("{")
        for k in range(n):
            key, record = base[k % len(base)]
            new_key = json.dumps(f"{key.split('_')[0]}_q{k}")
            body = json.dumps(record, indent=2).replace("\n", "\n  ")
            f.write(("," if k else "") + f"\n  {new_key}: {body}")
        f.write("\n}")
    (out / VIDEO_DIR).symlink_to((rendered / VIDEO_DIR).resolve())
    return out


DECLARED_TOML = """name = "scale"
rows = "questions.jsonl"
video = "videos/{object}/view_{view}_rgb_white_bg.mp4"
question = "question"
options = "options"
answer = "answer"
groups = ["category"]
frames = 6
"""


def declared_questions(rendered: Path, n: int, out: Path, ids: str = "own") -> Path:
    """A declared benchmark (benchmark.toml, questions.jsonl) of `n` multiple-choice questions,
    each on one view of a rendered object, in seven categories; `ids`: as --declared-ids."""
    objects = sorted(p.name for p in (rendered / VIDEO_DIR).iterdir())
    out.mkdir(parents=True)
    (out / "benchmark.toml").write_text(DECLARED_TOML + ('id = "id"\n' if ids == "key" else ""))
    with (out / "questions.jsonl").open("w") as f:  # a row at a time: this process stays small
        for k in range(n):
            row = {
                **({} if ids == "none" else {"id": f"q{k:06d}"}),
                "object": objects[k % len(objects)],
                "view": (k // len(objects)) % 4,
                "question": f"What does the object do in clip {k}?",
                "options": ["it spins", "it jumps", "it waves", "it stays still"],
                "answer": "ABCD"[k % 4],
                "category": f"category {k % 7}",
            }
            f.write(json.dumps(row) + "\n")
    (out / "videos").symlink_to((rendered / VIDEO_DIR).resolve())
    return out


def run_command(data: Path, out: Path, cache: Path, *more: str) -> list[str]:
    """`vidbench run` of the 4D-Bench questions in `data`, or of the declared benchmark there."""
    task = f"custom:{data}" if (data / "benchmark.toml").is_file() else TASK
    data_option = [] if task != TASK else ["--data", str(data)]
    return vidbench("--no-progress", "run", task, *data_option, "--model", "random",
                    "--out", str(out), "--cache-dir", str(cache), *more)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="question counts")
    parser.add_argument(
        "--objects", type=int, default=20, help="objects rendered (5 questions each)"
    )
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp folder)")
    parser.add_argument("--view", action="store_true", help="also time `vidbench view` per run")
    parser.add_argument("--ray", action="store_true", help="also run each size on local Ray")
    parser.add_argument(
        "--declared",
        action="store_true",
        help="a declared benchmark (custom:DIR, a JSONL rows file) over the same videos instead",
    )
    parser.add_argument(
        "--declared-ids",
        choices=("own", "key", "none"),
        default="own",
        help="the declared rows' ids: their `id` field (own), named by the id key (key), or none",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="vidbench-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        rendered = render(root / "rendered", args.objects)
        cache = root / "frame-cache"
        make = partial(declared_questions, ids=args.declared_ids) if args.declared else questions
        warm = make(rendered, 5 * args.objects, root / "warm-data")
        measure(run_command(warm, root / "warm-run", cache))  # fills the frame cache
        print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        header = (
            "| questions | run | per question | peak | rerun, all reused | per question | peak |"
        )
        header += " view | view peak | first page in Chromium |" if args.view else ""
        header += " on Ray | Ray driver peak |" if args.ray else ""
        print(header)
        print("|" + " --- |" * (header.count("|") - 1))
        for n in sizes:
            data = make(rendered, n, root / f"data-{n}")
            out = root / f"run-{n}"
            first = measure(run_command(data, out, cache))
            again = measure(run_command(data, out, cache))
            row = (
                f"| {n:,} | {first.wall_s:.1f} s | {1000 * first.wall_s / n:.2f} ms "
                f"| {first.peak_mb:.0f} MB | {again.wall_s:.1f} s "
                f"| {1000 * again.wall_s / n:.3f} ms | {again.peak_mb:.0f} MB |"
            )
            if args.view:
                report = root / f"view-{n}"
                shown = measure(vidbench("view", str(out), "--out", str(report)))
                row += f" {shown.wall_s:.1f} s | {shown.peak_mb:.0f} MB "
                row += f"| {first_page_s(report):.2f} s |"
            if args.ray:
                on_ray = measure(run_command(data, root / f"ray-{n}", cache, "--ray"))
                row += f" {on_ray.wall_s:.1f} s | {on_ray.peak_mb:.0f} MB |"
            print(row, flush=True)
            shutil.rmtree(data)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
