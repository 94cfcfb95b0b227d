"""`vidbench curate mmworld queries|asr|keyframes|questions|all`.

cli.py calls `register(curate_subparsers)` with the subparsers of its `curate` command; each
handler parses its arguments and calls the library (pipeline.py, queries.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.benchmarks.mmworld.curate.generation import SUBSETS
from vidbench.benchmarks.mmworld.curate.keyframes import DEFAULT_KEYFRAMES, DEFAULT_MAX_SIDE
from vidbench.benchmarks.mmworld.curate.pipeline import (
    CurateConfig,
    Curation,
)
from vidbench.benchmarks.mmworld.curate.whisper import AsrSettings
from vidbench.cli_options import CURATE_HELP, CommandGroups
from vidbench.console import err
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK
from vidbench.models.registry import ModelChoice, parse_options
from vidbench.runner.lock import results_lock
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("videos", help="a folder of videos, or a .csv/.jsonl/.txt list of them")
    options.add_out(p, "output folder")
    p.add_argument("--discipline", help="discipline of the videos that have no tag")


def _add_asr(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("speech recognition (faster-whisper)")
    g.add_argument("--asr-model", help="CTranslate2 Whisper folder (default: the shipped tiny.en)")
    g.add_argument("--asr-language", help="language code (default: detected)")
    g.add_argument(
        "--asr-beam-size", type=types.positive, default=5, help="beam search width (default 5)"
    )
    g.add_argument(
        "--no-asr-vad",
        action="store_true",
        help="transcribe non-speech too (default: Silero VAD drops it first)",
    )
    g.add_argument("--asr-compute-type", default="int8", help="CTranslate2 compute type")
    g.add_argument(
        "--asr-device", default="auto", choices=["auto", "cpu", "cuda"], help="default auto"
    )
    g.add_argument(
        "--asr-threads", type=types.non_negative, default=0, help="CPU threads (0: default)"
    )
    g.add_argument("--asr-cache-dir", help="transcript cache (default ~/.cache/vidbench/asr)")


def _add_keyframes(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("keyframes")
    g.add_argument("--keyframes", type=types.positive, default=DEFAULT_KEYFRAMES, help="per video")
    g.add_argument(
        "--max-side", type=types.max_side, default=DEFAULT_MAX_SIDE, help="pixels, longer side"
    )
    g.add_argument("--cache-dir", help="frame cache (default ~/.cache/vidbench/frames)")


def _add_calls(p: argparse.ArgumentParser, filters: bool) -> None:
    g = p.add_argument_group("model calls (stored in OUT/store.sqlite, never asked twice)")
    g.add_argument("--model", required=True, help="model spec of the generator")
    options.add_model_options(g, whose="the generator's")
    if filters:
        g.add_argument("--filter-model", help="answers from keyframes and blind (default: --model)")
        options.add_model_options(g, "--filter-opt", "the filter model's")
        g.add_argument("--text-model", help="answers from transcripts (default: --filter-model)")
        options.add_model_options(g, "--text-opt", "the text model's")
    options.add_concurrency(g)
    _add_attempts(g)
    options.add_seed(g, "seed of the option shuffle")


def _add_attempts(p: argparse._ActionsContainer) -> None:
    p.add_argument(
        "--attempts",
        type=types.positive,
        default=DEFAULT_ATTEMPTS,
        help=f"asks per unreadable reply (default {DEFAULT_ATTEMPTS})",
    )


def _add_generation(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("question generation")
    g.add_argument("--questions", type=types.positive, default=4, help="asked per video and subset")
    g.add_argument("--subsets", default="audio,visual", help="audio, visual or both")


def _subsets(text: str) -> tuple[str, ...]:
    from vidbench.core.errors import ConfigError

    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    if not chosen or set(chosen) - set(SUBSETS):
        raise ConfigError(f"--subsets {text!r}: choose from {', '.join(SUBSETS)}")
    return chosen


def _choice(spec: str | None, options: list[str] | None, flag: str) -> ModelChoice | None:
    return None if spec is None else ModelChoice(spec, parse_options(options or [], flag), flag)


def config_from(args: argparse.Namespace) -> CurateConfig:
    get = args.__dict__.get
    return CurateConfig(
        videos=Path(args.videos),
        out=Path(args.out),
        generator=_choice(get("model"), get("model_opt"), "--model-opt"),
        filter_model=_choice(get("filter_model"), get("filter_opt"), "--filter-opt"),
        text_model=_choice(get("text_model"), get("text_opt"), "--text-opt"),
        discipline=args.discipline,
        subsets=_subsets(get("subsets") or "audio,visual"),
        questions=get("questions") or 4,
        keyframes=get("keyframes") or DEFAULT_KEYFRAMES,
        max_side=get("max_side", DEFAULT_MAX_SIDE),
        asr=AsrSettings(
            model=get("asr_model"),
            language=get("asr_language"),
            beam_size=get("asr_beam_size") or 5,
            vad=not get("no_asr_vad"),
            compute_type=get("asr_compute_type") or "int8",
            device=get("asr_device") or "auto",
            threads=get("asr_threads") or 0,
        ),
        attempts=get("attempts") or DEFAULT_ATTEMPTS,
        concurrency=get("concurrency") or 16,
        seed=get("seed") or 0,
        cache_dir=Path(args.cache_dir) if get("cache_dir") else None,
        asr_cache_dir=Path(args.asr_cache_dir) if get("asr_cache_dir") else None,
        progress=not get("no_progress"),
    )


def _cmd_stage(args: argparse.Namespace) -> int:
    with results_lock(Path(args.out), f"curate mmworld {args.stage}"):  # one writer of OUT
        curation = Curation(config_from(args), err)
        if args.stage == "asr":
            curation.asr()
        elif args.stage == "keyframes":
            curation.keyframes()
        elif args.stage == "questions":
            curation.questions()
        else:
            return EXIT_INCOMPLETE if curation.all()["incomplete"] else EXIT_OK
        return EXIT_INCOMPLETE if curation.finish()["incomplete"] else EXIT_OK


def _cmd_queries(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.mmworld.curate.queries import QueriesConfig, generate_queries

    config = QueriesConfig(
        Path(args.out),
        args.model,
        parse_options(args.model_opt),
        tuple(args.discipline or ()),
        args.count,
        args.attempts,
        args.concurrency,
        not args.no_progress,
    )
    with results_lock(Path(args.out), "curate mmworld queries"):
        counts = generate_queries(config)
    failed = counts["error"] + counts["unparsed"]
    err.print(
        f"{counts['queries']} queries for {counts['ok']} subdisciplines in {args.out}/queries.txt"
        + (f"; [red]{failed} subdisciplines without queries[/]" if failed else "")
    )
    return EXIT_INCOMPLETE if counts["error"] else EXIT_OK


def register(groups: CommandGroups) -> None:
    """`curate mmworld ...`."""
    mmworld = groups.group("curate", CURATE_HELP).add_parser(
        "mmworld", help="build MMWorld's synthetic audio/visual subsets"
    )
    stages = mmworld.add_subparsers(dest="stage", required=True)

    p = stages.add_parser("queries", help="search queries per subdiscipline (paper appendix C)")
    options.add_out(p, "output folder: queries.jsonl, queries.txt, funnel.json")
    p.add_argument("--model", required=True, help="model spec of the query generator")
    options.add_model_options(p, whose="the generator's")
    p.add_argument("--discipline", action="append", help="only these disciplines (repeatable)")
    p.add_argument("--count", type=types.positive, default=5, help="queries per subdiscipline")
    options.add_concurrency(p)
    _add_attempts(p)
    p.set_defaults(func=_cmd_queries)

    helps = {
        "asr": "transcribe every video: OUT/transcripts/<video>.json",
        "keyframes": "keyframes of every video: OUT/keyframes/<video>/*.jpg",
        "questions": "asr, keyframes, question generation: OUT/candidates.jsonl",
        "all": "every stage, filters and the subset files: OUT/mmworld.json",
    }
    for stage, text in helps.items():
        p = stages.add_parser(stage, help=text)
        _add_common(p)
        if stage in ("asr", "questions", "all"):
            _add_asr(p)
        if stage in ("keyframes", "questions", "all"):
            _add_keyframes(p)
        if stage in ("questions", "all"):
            _add_calls(p, filters=stage == "all")
            _add_generation(p)
        p.set_defaults(func=_cmd_stage)
