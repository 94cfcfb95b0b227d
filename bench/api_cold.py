"""Frame preparation on real clips with a cold cache, against an API model: 192 MMWorld-style
questions over the 24 AutoEval-Video clips (8 questions per clip, 8 frames each), the fake chat
server with 1 s latency and room for 32 requests at once, --concurrency 32.

    python bench/api_cold.py --clips AUTOEVAL_VIDEO_DATA/video [--per-clip 8] [--repeat 3]

Without --clips it uses the 8 clips the repository keeps (tests/data/autoeval-video: 64
questions, ideal 2 s). With the 24 clips: ideal 192 / 32 x 1 s = 6 s.

    python bench/api_cold.py --fourd 32 [--size 512] [--repeat 3]

The 4D path instead: 4D-Bench QA (`4dbench-qa`, its own frame spec: three views a question) over
--fourd procedural objects (`vidbench synth 4d`, 24 views of --size px, 24 frames), five
questions an object sharing its three views' frames: 32 objects are 160 questions, ideal 5 s (a
number of questions that is not a multiple of 32 needs a last, partly filled round of 1 s).

Each repetition measures, in this order:
- the decode floor: decoding (and scaling, in libswscale) every frame the run needs, each clip
  once, with as many clips at once as the infer stage prepares (one per core);
- the cold run: the infer stage into a fresh results directory with an empty frame cache;
- the warm run: again into a fresh results directory, the frame cache now full.
Every question of a clip asks for the same frames, so a cold run must decode each clip once: the
decode calls are counted in this process. The CPU seconds of this process (decoding, encoding,
building and sending requests; not the server's) are printed with each figure. Targets (issue
35): cold at most 1.2x max(ideal, decode floor), warm at most 1.1x ideal. Other work on the
machine slows all three: the load average is printed with each repetition, and the best of the
repetitions is the figure to quote. Below each repetition, the cold and warm runs' timelines:
when the first request went out, the request that fills the server's slots (--capacity), the
last decode, the last request and the last answer, in seconds from the stage's start.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from api_throughput import server_stats, start_server  # bench/ is on sys.path when run
from vidbench.media import frames as frames_module
from vidbench.media.cache import file_digest
from vidbench.media.decode import VideoInfo, decode_frames, probe
from vidbench.media.frames import frame_picks
from vidbench.media.sampling import window_indices
from vidbench.models.openai_backend import OpenAIChat
from vidbench.runner.infer import preparing_threads, same_frames
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig

DEFAULT_CLIPS = Path(__file__).resolve().parents[1] / "tests/data/autoeval-video/video"


def write_dataset(clips: Path, root: Path, per_clip: int) -> int:
    """An MMWorld annotation file over the clips (linked, not copied); returns the clip count."""
    videos = sorted(clips.glob("*.mp4"))
    if not videos:
        raise SystemExit(f"no .mp4 clips in {clips}")
    root.mkdir(parents=True, exist_ok=True)
    records = []
    for video in videos:
        link = root / video.name
        if not link.exists():
            link.symlink_to(video.resolve())
        questions = [
            {
                "type": "explanation",
                "question": f"Question {i} about clip {video.stem}?",
                "options": {"a": "one", "b": "two", "c": "three", "d": "four"},
                "answer": "one",
                "correct_answer_label": "a",
                "requires_domain_knowledge": False,
                "requires_audio": False,
                "requires_visual": True,
                "question_only": False,
            }
            for i in range(per_clip)
        ]
        records.append(
            {
                "video_id": video.stem,
                "video_url": "",
                "discipline": "Sports & Arts",
                "subdiscipline": "bench",
                "captions": [],
                "questions": questions,
            }
        )
    (root / "mmworld.json").write_text(json.dumps(records))
    return len(videos)


@dataclass
class Timeline:
    """When (time.perf_counter) a run's videos were decoded and its requests sent and answered:
    where a cold run's time goes."""

    decoded: list[float] = field(default_factory=list)
    sent: list[float] = field(default_factory=list)
    answered: list[float] = field(default_factory=list)

    def clear(self) -> None:
        for marks in (self.decoded, self.sent, self.answered):
            marks.clear()

    def describe(self, started: float, capacity: int) -> str:
        """The first request, the request that fills the server's slots, the last decode, the
        last request and the last answer, in seconds from `started`."""
        sent = sorted(self.sent)
        marks = [
            ("first request", sent[0] if sent else None),
            (f"request {capacity}", sent[capacity - 1] if len(sent) >= capacity else None),
            ("last decode", max(self.decoded, default=None)),
            ("last request", sent[-1] if sent else None),
            ("last answer", max(self.answered, default=None)),
        ]
        return ", ".join(f"{name} {t - started:.2f}" for name, t in marks if t is not None)


def watch(timeline: Timeline) -> Counter[str]:
    """Wrap the frame loader's decoder and the chat backend's send so each decode is counted per
    video and every decode, request and answer is put on `timeline`."""
    counts: Counter[str] = Counter()
    decode = frames_module.decode_frames

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        counts[f"{Path(path).parent.name}/{Path(path).name}"] += 1  # 4D views share file names
        frames = decode(path, *args, **kwargs)
        timeline.decoded.append(time.perf_counter())
        return frames

    send = OpenAIChat._send

    async def timed_send(self, client, payload, request):  # type: ignore[no-untyped-def]
        timeline.sent.append(time.perf_counter())
        response = await send(self, client, payload, request)
        timeline.answered.append(time.perf_counter())
        return response

    frames_module.decode_frames = counted  # type: ignore[assignment]
    OpenAIChat._send = timed_send  # type: ignore[method-assign]
    return counts


@dataclass(frozen=True)
class DecodeJob:
    """The frames of one video that a run needs."""

    path: Path
    info: VideoInfo
    picks: list[int]
    max_side: int | None


def write_fourd(root: Path, objects: int, size: int) -> int:
    """A procedural 4D-Bench dataset (24 views of `size` px, 24 frames) of `objects` objects;
    returns its question count."""
    command = [sys.executable, "-m", "vidbench.cli", "--no-progress", "synth", "4d"]
    options = ["--out", str(root), "--objects", str(objects), "--size", str(size), "--frames", "24"]
    subprocess.run([*command, *options], check=True, stdout=subprocess.DEVNULL)
    qa = root / "4D_Object_Question_Answering" / "data" / "4d_qa.json"
    return len(json.loads(qa.read_text()))


def decode_jobs(run: Run) -> list[DecodeJob]:
    """Every video the run's samples show, once per content (the frame cache is keyed by the
    file's bytes), in the order the infer stage prepares them, with the frames it needs."""
    spec = run.task.frame_spec
    jobs: dict[tuple[str, tuple[int, ...]], DecodeJob] = {}
    for group in same_frames(run.samples, needs_frames=True):
        media = group[0].media
        for view in spec.views:
            path = Path(media.videos[view])
            info = probe(path)
            window = window_indices(info.times, media.start_s, media.end_s)
            picks = frame_picks(path, info, window, spec)
            job = DecodeJob(path, info, picks, spec.max_side)
            jobs.setdefault((file_digest(path), tuple(picks)), job)
    return list(jobs.values())


def decode_floor(jobs: list[DecodeJob]) -> tuple[float, float]:
    """(wall, CPU) seconds to decode every job with the infer stage's parallelism (one clip per
    thread)."""
    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(preparing_threads()) as pool:
        list(pool.map(lambda j: decode_frames(j.path, j.info, j.picks, j.max_side), jobs))
    return time.perf_counter() - started, time.process_time() - cpu


def run_frames(config: RunConfig) -> int:
    """Frames a question shows: views x frames a view."""
    spec = Run(config).task.frame_spec
    return len(spec.views) * spec.frames


def timed_infer(config: RunConfig) -> tuple[float, float, int, float]:
    """(wall seconds, this process's CPU seconds, requests answered, start time) of the infer
    stage."""
    run = Run(config)
    started, cpu = time.perf_counter(), time.process_time()
    stats = run.infer()
    return time.perf_counter() - started, time.process_time() - cpu, stats.answered, started


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) another process has used so far, from /proc (Linux); NaN
    elsewhere. The fake server shares this machine's cores with the run: what it uses is taken
    from the run's decoding, and a remote API would not use it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=Path, default=DEFAULT_CLIPS)
    parser.add_argument("--per-clip", type=int, default=8)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--capacity", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=1, help="measure this many times")
    parser.add_argument("--fourd", type=int, metavar="OBJECTS", help="the 4D path instead")
    parser.add_argument("--size", type=int, default=512, help="--fourd: the views' pixels")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="vidbench-bench-cold-"))
    if args.fourd:
        task, frames = "4dbench-qa", {}  # the task's own frame spec: three views
        questions = write_fourd(workdir / "data", args.fourd, args.size)
        clips = args.fourd
    else:
        task, frames = "mmworld", {"frames": args.frames}
        clips = write_dataset(args.clips, workdir / "data", args.per_clip)
        questions = clips * args.per_clip
    ideal = questions / args.capacity * args.latency
    timeline = Timeline()
    counts = watch(timeline)
    # A process pays for importing the API client once, whatever its frame cache holds: imported
    # here, so the first timed run does not pay for it (about 0.5 s on a quiet machine).
    importlib.import_module("openai")
    server, base_url = start_server(args.latency, args.capacity)

    def config(name: str, attempt: int) -> RunConfig:
        return RunConfig(
            task=task,
            data=str(workdir / "data"),
            model=f"openai-compat:{base_url}#bench",
            out=str(workdir / f"runs-{attempt}" / name),
            concurrency=args.concurrency,
            frames=frames,
            cache_dir=str(workdir / f"cache-{attempt}"),
            progress=False,
        )

    results: list[dict[str, float]] = []
    try:
        jobs = decode_jobs(Run(config("floor", 0)))
        print(
            f"{questions} questions over {clips} {'objects' if args.fourd else 'clips'}, "
            f"{run_frames(config('floor', 0))} frames each; "
            f"{len(jobs)} videos to decode, {preparing_threads()} at a time; ideal {ideal:.2f} s "
            f"({questions}/{args.capacity} x {args.latency:g} s)"
        )
        for attempt in range(1, args.repeat + 1):
            load = os.getloadavg()[0]
            floor, floor_cpu = decode_floor(jobs)
            measured = {"floor": floor}
            cpu = {"floor": floor_cpu}
            decodes: dict[str, Counter[str]] = {}
            timelines: dict[str, str] = {}
            for name in ("cold", "warm"):
                counts.clear()
                timeline.clear()
                served_cpu = process_cpu(server.pid)
                measured[name], cpu[name], answered, started = timed_infer(config(name, attempt))
                cpu[f"server {name}"] = process_cpu(server.pid) - served_cpu
                decodes[name] = Counter(counts)
                timelines[name] = timeline.describe(started, args.capacity)
                if answered != questions:
                    raise SystemExit(f"{name}: {answered} of {questions} answered")
            cold_ratio = measured["cold"] / max(ideal, floor)
            print(
                f"#{attempt} (load {load:.1f}): floor {floor:.2f} s; cold {measured['cold']:.2f} s "
                f"({cold_ratio:.2f}x max(ideal, floor)); warm {measured['warm']:.2f} s "
                f"({measured['warm'] / ideal:.2f}x ideal); CPU s floor {cpu['floor']:.2f}, cold "
                f"{cpu['cold']:.2f}, warm {cpu['warm']:.2f} (the fake server: cold "
                f"{cpu['server cold']:.2f}, warm {cpu['server warm']:.2f}); decodes: cold "
                f"{sum(decodes['cold'].values())} over {len(decodes['cold'])} clips (at most "
                f"{max(decodes['cold'].values(), default=0)} per clip), warm "
                f"{sum(decodes['warm'].values())}"
            )
            print(f"   seconds into the cold run: {timelines['cold']}")
            print(f"   seconds into the warm run: {timelines['warm']}")
            results.append(measured)
        served = server_stats(base_url)["served"]
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    best = {k: min(r[k] for r in results) for k in ("floor", "cold", "warm")}
    cold_ratios = [r["cold"] / max(ideal, r["floor"]) for r in results]
    warm_ratios = [r["warm"] / ideal for r in results]
    print(
        f"best of {len(results)}: floor {best['floor']:.2f} s, cold {best['cold']:.2f} s, "
        f"warm {best['warm']:.2f} s; cold/max(ideal, floor) {min(cold_ratios):.2f}x "
        f"(spread {min(cold_ratios):.2f}-{max(cold_ratios):.2f}), warm/ideal "
        f"{min(warm_ratios):.2f}x (spread {min(warm_ratios):.2f}-{max(warm_ratios):.2f}); "
        f"server served {served}"
    )


if __name__ == "__main__":
    main()
