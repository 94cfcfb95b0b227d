"""A judged run as the question count grows: `vidbench run autoeval-video` over N instances, its
answers from a predictions file and an LLM judge (the fake chat server, no latency) asked about
each one, each size run in its own process.

    python bench/judge_scale.py [--sizes 2000,20000] [--concurrency 32] [--stages]

The data: AutoEval-Video's rules as the repository keeps them (tests/data/autoeval-video: 327
instances, 8 clips), repeated under new ids up to N, every instance's clip a link to one of the
8; the predictions are the file beside them, repeated the same way, each marked with its id (so
that no two judge calls are the same prompt, which the judge would be asked once). The
`predictions:` model decodes no frame, so the figures are the run's own cost with a judge:
loading, the judge stage (every answer's rules call, asked and stored) and scoring and writing
the rows. Printed for each size: the wall time of the run (and per question), the peak memory
(maximum resident set) of that process, and a rerun into the same folder, where every answer
and verdict is read back from the store. The judge server's process is not counted. With
--stages, each stage of that rerun is then run alone (`--stage infer`, `judge`, `score`,
`report`): its wall time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from api_throughput import server_stats, start_server  # bench/ is on sys.path when run
from scale import measure, vidbench

KEPT = Path(__file__).resolve().parents[1] / "tests/data/autoeval-video"
STAGES = ("infer", "judge", "score", "report")
VERDICT = "The answer follows the rule.\n1"  # what the robust protocol reads as "correct"


def write_data(n: int, root: Path) -> tuple[Path, Path]:
    """N instances in ROOT (rules file and clip links) and their predictions file."""
    rules = [json.loads(line) for line in (KEPT / "AUTO-EVAL-VIDEO.json").read_text().splitlines()]
    answers = {
        json.loads(line)["ID"]: json.loads(line)["prediction"]
        for line in (KEPT / "prediction_sample.json").read_text().splitlines()
    }
    clips = sorted((KEPT / "video").glob("*.mp4"))
    (root / "video").mkdir(parents=True)
    with (
        open(root / "AUTO-EVAL-VIDEO.json", "w", encoding="utf-8") as rules_file,
        open(root / "predictions.jsonl", "w", encoding="utf-8") as predictions,
    ):
        for i in range(1, n + 1):
            rule = rules[(i - 1) % len(rules)]
            rules_file.write(json.dumps({**rule, "ID": i}) + "\n")
            answer = f"{answers[rule['ID']]} (take {i})"  # each call its own prompt: asked
            predictions.write(json.dumps({"ID": i, "prediction": answer}) + "\n")
            (root / "video" / f"{i}.mp4").symlink_to(clips[i % len(clips)])
    return root, root / "predictions.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--stages", action="store_true", help="also each stage alone")
    args = parser.parse_args()
    server, base_url = start_server(0.0, 256, VERDICT)
    try:
        with tempfile.TemporaryDirectory(prefix="vidbench-judge-scale-") as tmp:
            for n in (int(size) for size in args.sizes.split(",")):
                data, predictions = write_data(n, Path(tmp) / f"data-{n}")
                out = Path(tmp) / f"out-{n}"
                command = vidbench(
                    "--no-progress", "run", "autoeval-video", "--data", str(data),
                    "--model", f"predictions:{predictions}",
                    "--judge", f"openai-compat:{base_url}#judge",
                    "--concurrency", str(args.concurrency), "--out", str(out),
                )  # fmt: skip
                before = server_stats(base_url)["served"]
                first = measure(command)
                asked = server_stats(base_url)["served"] - before
                again = measure(command)
                results = json.loads((out / "results.json").read_text())
                print(
                    f"{n:>7,} questions: run {first.wall_s:6.1f} s "
                    f"({1000 * first.wall_s / n:.2f} ms a question, {asked:,} judge calls), "
                    f"peak {first.peak_mb:5.0f} MB; rerun {again.wall_s:5.1f} s "
                    f"({1000 * again.wall_s / n:.2f} ms a question), peak {again.peak_mb:4.0f} MB; "
                    f"n = {results['n']}, errors {results['errors']}",
                    flush=True,
                )
                if args.stages:
                    alone = {stage: measure([*command, "--stage", stage]) for stage in STAGES}
                    print(
                        "         a stage alone: "
                        + ", ".join(
                            f"{stage} {m.wall_s:.1f} s {m.peak_mb:.0f} MB"
                            for stage, m in alone.items()
                        ),
                        flush=True,
                    )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
