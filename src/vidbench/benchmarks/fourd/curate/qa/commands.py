"""`vidbench curate 4d qa` and `vidbench curate 4d captions`.

curate/commands.py calls `register(stages)` with the subparsers of `curate 4d`; the handlers
parse arguments into typed configs and call the library (pipeline.py, captions.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.benchmarks.fourd.curate.qa.candidates import SUBTASKS
from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.media.spec import FrameSpec
from vidbench.models.registry import parse_options
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS


def _add_frames(p: argparse.ArgumentParser) -> None:
    """The frame options of `vidbench run` (official 4D-Bench FrameSpec by default)."""
    g = options.add_frames(p, "frames the models see (default: views 1,8,16, six frames each)")
    g.add_argument("--cache-dir", help="frame cache (default ~/.cache/vidbench/frames)")


def _spec(args: argparse.Namespace) -> FrameSpec:
    from vidbench.benchmarks.fourd.variants import SPEC
    from vidbench.media.spec import frame_overrides

    overrides = frame_overrides(
        args.views, args.frames, args.sampler, args.order, args.timestamps, args.max_side
    )
    views = overrides.get("views")
    if isinstance(views, list):
        overrides["views"] = tuple(views)
    return SPEC.with_(**overrides)


def _add_calls(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model calls (stored in OUT/store.sqlite, never asked twice)")
    options.add_concurrency(g, default=8)
    g.add_argument(
        "--attempts",
        type=types.positive,
        default=DEFAULT_ATTEMPTS,
        help="asks per unreadable reply",
    )


def show_prompts() -> str:
    """Every prompt file of `curate 4d qa`, with its version, as the models get it (before the
    $fields are filled)."""
    from vidbench.benchmarks.fourd.curate.qa import calls

    names = [
        "generate",
        *(f"subtask_{s}" for s in SUBTASKS.values()),
        "validate",
        "blind",
        "caption",
    ]
    parts = []
    for name in names:
        prompt = calls.prompt(name)
        parts.append(f"===== {prompt.version} =====\n{prompt.template.template.strip()}\n")
    return "\n".join(parts)


def _subtasks(text: str | None) -> tuple[str, ...]:
    if not text:
        return tuple(SUBTASKS)
    by_suffix = {suffix: name for name, suffix in SUBTASKS.items()}
    chosen = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        name = by_suffix.get(word) or next((s for s in SUBTASKS if s.lower() == word.lower()), None)
        if name is None:
            raise ConfigError(f"--subtasks: unknown {word!r}; choose from {', '.join(by_suffix)}")
        chosen.append(name)
    return tuple(chosen)


class _Blind(argparse.Action):
    """--blind SPEC: one more blind model, with the --blind-opt options given after it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        value: object,
        option_string: str | None = None,
    ) -> None:
        namespace.blind = [*(namespace.blind or []), (value, [])]


class _BlindOpt(argparse.Action):
    """--blind-opt KEY=VALUE: a backend setting of the --blind model given just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        value: object,
        option_string: str | None = None,
    ) -> None:
        if not namespace.blind:
            parser.error("--blind-opt goes after the --blind it belongs to")
        namespace.blind[-1][1].append(value)


def _cmd_qa(args: argparse.Namespace) -> int:
    if args.show_prompts:
        out.print(show_prompts(), markup=False, highlight=False)
        return 0
    missing = [f for f in ("data", "out", "generator", "validator") if not getattr(args, f)]
    if missing or len(args.blind or []) != 2:
        need = [f"--{f}" for f in missing] + (
            ["--blind twice"] if len(args.blind or []) != 2 else []
        )
        raise ConfigError(f"curate 4d qa: give {', '.join(need)} (or --show-prompts)")
    from vidbench.benchmarks.fourd.curate.qa.config import QAConfig
    from vidbench.benchmarks.fourd.curate.qa.pipeline import QACuration
    from vidbench.models.registry import ModelChoice

    config = QAConfig(
        data=Path(args.data),
        out=Path(args.out),
        generator=ModelChoice(
            args.generator, parse_options(args.generator_opt, "--generator-opt"), "--generator-opt"
        ),
        validator=ModelChoice(
            args.validator, parse_options(args.validator_opt, "--validator-opt"), "--validator-opt"
        ),
        blind=tuple(
            ModelChoice(spec, parse_options(opts, "--blind-opt"), "--blind-opt")
            for spec, opts in args.blind
        ),
        spec=_spec(args),
        subtasks=_subtasks(args.subtasks),
        questions=args.questions,
        objects=args.objects,
        attempts=args.attempts,
        concurrency=args.concurrency,
        seed=args.seed,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        progress=not args.no_progress,
    )
    data = QACuration(config, err).run()
    return EXIT_INCOMPLETE if data["incomplete"] else EXIT_OK


def _cmd_captions(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.fourd.curate.qa.captions import CaptionConfig, draft_captions

    config = CaptionConfig(
        data=Path(args.data),
        out=Path(args.out),
        model=args.model,
        model_options=parse_options(args.model_opt),
        spec=_spec(args),
        attempts=args.attempts,
        concurrency=args.concurrency,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        progress=not args.no_progress,
    )
    counts = draft_captions(config, err)
    err.print(", ".join(f"{k} {v}" for k, v in counts.items()), highlight=False)
    if counts["empty"]:
        err.print(
            f"[yellow]{counts['empty']} empty repl{'y' if counts['empty'] == 1 else 'ies'}[/]: "
            "no draft for those objects (their replies are stored and not asked again)",
            highlight=False,
        )
    return EXIT_INCOMPLETE if counts["failed"] or counts["empty"] else EXIT_OK


def register(stages: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`curate 4d qa` and `curate 4d captions`."""
    p = stages.add_parser("qa", help="generate, validate and blind-filter questions (4d_qa.json)")
    p.add_argument("--data", help="objects: a 4D-Bench data folder or `curate 4d render` output")
    p.add_argument("--out", help="output folder (a data folder `run 4dbench-qa` reads)")
    p.add_argument("--generator", help="model spec that writes the questions (sees the frames)")
    options.add_model_options(p, "--generator-opt", "the generator's")
    p.add_argument("--validator", help="model spec that checks each question (sees the frames)")
    options.add_model_options(p, "--validator-opt", "the validator's")
    p.add_argument("--blind", action=_Blind, help="text-only model spec; give it twice")
    p.add_argument(
        "--blind-opt", action=_BlindOpt, metavar="KEY=VALUE", help="for the --blind before it"
    )
    p.add_argument(
        "--questions",
        type=types.positive,
        default=2,
        help="asked of the generator per object and subtask",
    )
    p.add_argument("--subtasks", help="comma-separated suffixes, e.g. motion,appearance")
    p.add_argument("--objects", type=types.positive, help="only the first N objects (by uid)")
    p.add_argument("--seed", type=int, default=0, help="option shuffle and gold balance")
    p.add_argument("--show-prompts", action="store_true", help="print the prompts and exit")
    _add_frames(p)
    _add_calls(p)
    p.set_defaults(func=_cmd_qa)

    p = stages.add_parser("captions", help="machine-drafted captions for annotators to edit")
    p.add_argument("--data", required=True, help="a 4D-Bench data folder or render output")
    p.add_argument("--out", required=True, help="writes OUT/caption_drafts.jsonl")
    p.add_argument("--model", required=True, help="model spec that drafts the captions")
    options.add_model_options(p, whose="the drafting model's")
    _add_frames(p)
    _add_calls(p)
    p.set_defaults(func=_cmd_captions)
