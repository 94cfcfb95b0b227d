"""Frame preparation on real clips with a cold cache, against an API model: 192 MMWorld-style
questions over the 24 AutoEval-Video clips (8 questions per clip, 8 frames each), the fake chat
server with 1 s latency and room for 32 requests at once, --concurrency 32.

    python bench/api_cold.py --clips AUTOEVAL_VIDEO_DATA/video [--per-clip 8]

Without --clips it uses the 8 clips the repository keeps (tests/data/autoeval-video: 64
questions, ideal 2 s). With the 24 clips: ideal 192 / 32 x 1 s = 6 s. Every question of a clip
asks for the same frames, so a cold run must decode each clip once (simultaneous cache misses on
one video and FrameSpec are merged): the decode calls are counted in this process. Two measured
runs of the infer stage into fresh results directories: cold (empty frame cache) and warm.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from api_throughput import server_stats, start_server  # bench/ is on sys.path when run
from vidbench.media import frames as frames_module
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


def count_decodes() -> Counter[str]:
    """Wrap the frame loader's decoder so each call is counted per video."""
    counts: Counter[str] = Counter()
    decode = frames_module.decode_frames

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        counts[Path(path).name] += 1
        return decode(path, *args, **kwargs)

    frames_module.decode_frames = counted  # type: ignore[assignment]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=Path, default=DEFAULT_CLIPS)
    parser.add_argument("--per-clip", type=int, default=8)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--capacity", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="vidbench-bench-cold-"))
    clips = write_dataset(args.clips, workdir / "data", args.per_clip)
    questions = clips * args.per_clip
    counts = count_decodes()
    server, base_url = start_server(args.latency, args.capacity)
    try:
        for name in ("cold", "warm"):
            counts.clear()
            config = RunConfig(
                task="mmworld",
                data=str(workdir / "data"),
                model=f"openai-compat:{base_url}#bench",
                out=str(workdir / "runs" / name),
                concurrency=args.concurrency,
                frames={"frames": args.frames},
                cache_dir=str(workdir / "cache"),
                progress=False,
            )
            run = Run(config)
            started = time.perf_counter()
            stats = run.infer()
            wall = time.perf_counter() - started
            most = max(counts.values(), default=0)
            print(
                f"{name:>5} frame cache: {stats.answered}/{questions} answered in {wall:.2f} s "
                f"({wall / (questions / args.capacity * args.latency):.2f}x ideal); "
                f"decodes {sum(counts.values())} over {len(counts)} clips (at most {most} per clip)"
            )
        served = server_stats(base_url)["served"]
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"{questions} questions over {clips} clips, {args.frames} frames each; ideal "
        f"{questions / args.capacity * args.latency:.1f} s; server served {served}"
    )


if __name__ == "__main__":
    main()
