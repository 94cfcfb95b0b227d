"""The AutoEval-Video commands: `judge autoeval-video`, `judge-agreement` and `rules ...`.

cli.py calls `register(sub)`; each handler parses its arguments and calls the library.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from rich.markup import escape

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import PROMPT_KINDS, JudgePrompt
from vidbench.cli_options import CommandGroups
from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK
from vidbench.models.registry import ModelChoice, parse_options
from vidbench.runner.commands import rejected_advice
from vidbench.runner.lock import results_lock

if TYPE_CHECKING:
    from vidbench.benchmarks.autoeval_video.redteam import Workspace


def _add_judge_options(p: argparse.ArgumentParser, prompt: bool = True) -> None:
    g = p.add_argument_group("judge")
    options.add_judge(g, required=True, what="the judge")
    g.add_argument(
        "--protocol",
        choices=list(rules.PROTOCOLS),
        default=rules.DEFAULT_PROTOCOL,
        help=f"official (the paper's script) or robust (default {rules.DEFAULT_PROTOCOL})",
    )
    g.add_argument("--parser", choices=list(rules.PARSERS), help="verdict parser (protocol's)")
    g.add_argument(
        "--unparsed", choices=["drop", "wrong"], help="a verdict that never parses (protocol's)"
    )
    g.add_argument(
        "--judge-attempts",
        type=types.positive,
        help=f"asks per unreadable reply (official: {rules.OFFICIAL_ATTEMPTS})",
    )
    g.add_argument("--empty-answer", choices=["judge", "wrong"], help="empty answers (protocol's)")
    options.add_concurrency(g, what="judge calls")
    options.add_seed(g, "seed of the bootstrap intervals")
    if prompt:
        g.add_argument(
            "--judge-prompt",
            choices=PROMPT_KINDS,
            default="rules",
            help="rules: each instance's own rule (the paper's); unified: one prompt with a "
            "reference answer (default rules)",
        )
        g.add_argument("--references", help="JSON Lines {ID, reference} for the unified prompt")


def _protocol(args: argparse.Namespace) -> rules.JudgeProtocol:
    return rules.get_protocol(args.protocol).with_(
        parser=args.parser,
        unparsed=args.unparsed,
        attempts=args.judge_attempts,
        empty=args.empty_answer,
    )


def _judge(args: argparse.Namespace) -> ModelChoice:
    options = parse_options(args.judge_opt, "--judge-opt")
    return ModelChoice(args.judge, options, "--judge-opt", args.concurrency, args.seed)


def _prompt(args: argparse.Namespace) -> JudgePrompt:
    refs = Path(args.references) if args.references else None
    return JudgePrompt.make(args.judge_prompt, _protocol(args), refs)


class Judging(TypedDict):
    """What judging predictions and measuring the judge's agreement take alike."""

    rules: Path
    out: Path
    judge: ModelChoice
    prompt: JudgePrompt
    seed: int
    progress: bool


def _judging(args: argparse.Namespace) -> Judging:
    """What judging predictions and measuring the judge's agreement take alike."""
    return {
        "rules": Path(args.rules),
        "out": Path(args.out),
        "judge": _judge(args),
        "prompt": _prompt(args),
        "seed": args.seed,
        "progress": not args.no_progress,
    }


def _cmd_judge(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.autoeval_video.judge_predictions import (
        UNKNOWN_ID,
        JudgeJob,
        judge_predictions,
    )

    job = JudgeJob(
        predictions=Path(args.predictions), name=args.name, fresh=args.fresh, **_judging(args)
    )
    results = judge_predictions(job, out)  # the run's stages hold OUT while they work
    err.print(
        f"judged {results['n_judged']}, dropped {results['n_dropped']}, "
        f"unparsed {results['n_unparsed']}, not judged {results['errors']}: see {args.out}"
    )
    # as `run`: results that leave an instance out (no verdict, no prediction, a bad rule) never
    # exit 0; a prediction for an ID without a rule leaves no instance out
    by_status = results["errors_by_status"]
    assert isinstance(by_status, dict)
    if set(by_status) <= {UNKNOWN_ID}:
        return EXIT_OK
    details = results["error_details"]
    assert isinstance(details, list)
    refused = Counter(
        str(e["change_first"]) for e in details if isinstance(e, dict) and e.get("change_first")
    )
    err.print(
        f"[red]incomplete[/]: the results in {escape(args.out)} do not cover every instance "
        f"(exit code {EXIT_INCOMPLETE}); error_details in results.json names each and why "
        "(a judge call that failed is asked again by the same command)"
        + (f"; {escape(rejected_advice(refused))}" if refused else ""),
        highlight=False,
    )
    return EXIT_INCOMPLETE


def _cmd_agreement(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.autoeval_video.agreement import AgreementJob, judge_agreement

    job = AgreementJob(labels=Path(args.labels), **_judging(args))
    with results_lock(job.out, "vidbench judge-agreement"):
        report = judge_agreement(job, out)
    missing = report["n_unjudged"] + report["n_refused"]
    if not missing:
        return EXIT_OK
    err.print(  # an agreement measured without some verdicts is not complete
        f"[red]incomplete[/]: {missing} label(s) have no verdict (exit code "
        f"{EXIT_INCOMPLETE}); the same command again asks only those"
        + (" (once what is said above has changed)" if report["n_refused"] else "")
    )
    return EXIT_INCOMPLETE


def _cmd_rules(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.autoeval_video import redteam

    workspace_dir = Path(args.workspace)
    if args.rules_command == "init":
        redteam.Workspace.init(workspace_dir, Path(args.rules))
        err.print(f"red team workspace at {workspace_dir}")
        return 0
    if args.rules_command in ("attack", "check", "revise"):  # they write the workspace
        with results_lock(workspace_dir, f"vidbench rules {args.rules_command}"):
            return _rules_command(args, redteam.Workspace.open(workspace_dir))
    return _rules_command(args, redteam.Workspace.open(workspace_dir))


def _rules_command(args: argparse.Namespace, workspace: Workspace) -> int:
    from vidbench.benchmarks.autoeval_video import redteam, redteam_view

    if args.rules_command == "attack":
        answer = Path(args.answer_file).read_text("utf-8") if args.answer_file else args.answer
        number = workspace.add_attack(args.id, answer, args.expect, args.note)
        err.print(f"ID {args.id}: attack {number} recorded (expected verdict {args.expect})")
    elif args.rules_command == "check":
        from vidbench.benchmarks.autoeval_video.redteam_check import check

        round_ = check(workspace, args.id, _judge(args), _protocol(args), not args.no_progress, err)
        redteam_view.print_round(out, str(args.id), workspace.instance(args.id), round_)
        return 1 if round_["successful_attacks"] else 0
    elif args.rules_command == "revise":
        version = workspace.revise(args.id, Path(args.rule_file).read_text("utf-8"), args.note)
        err.print(f"ID {args.id}: rule v{version['version']} (answers round {version['round']})")
    elif args.rules_command == "show":
        if args.id is None:
            redteam_view.print_overview(out, workspace)
        else:
            redteam_view.print_history(out, str(args.id), workspace.instance(args.id))
    elif args.rules_command == "export":
        if workspace.rules_changed():
            err.print(f"[yellow]warning[/]: {workspace.rules_file} changed since `rules init`")
        revised = redteam.export_rules(workspace, Path(args.out), args.initial)
        err.print(f"wrote {args.out} ({revised} revised rule(s))")
    return 0


def _workspace(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", help="the red-team workspace folder")


def _instance(p: argparse.ArgumentParser) -> None:
    _workspace(p)
    p.add_argument("id", help="the instance ID")


def register(groups: CommandGroups) -> None:
    """`judge autoeval-video`, `judge-agreement` and `rules ...`."""
    sub = groups.top
    judge = groups.group("judge", "judge predictions made elsewhere")
    p = judge.add_parser("autoeval-video", help="with the AutoEval-Video rules")
    p.add_argument("--rules", required=True, help="AUTO-EVAL-VIDEO.json or its folder")
    p.add_argument("--predictions", required=True, help='JSON Lines {"ID": .., "prediction": ..}')
    options.add_out(p, "results directory")
    p.add_argument("--name", help="row name in the table (default: the predictions file name)")
    options.add_fresh(p)
    _add_judge_options(p)
    p.set_defaults(func=_cmd_judge)

    p = sub.add_parser("judge-agreement", help="the judge's agreement with human verdicts")
    p.add_argument("--rules", required=True, help="AUTO-EVAL-VIDEO.json or its folder")
    p.add_argument("--labels", required=True, help='JSON Lines {"ID", "answer", "human": 0|1}')
    options.add_out(p, "results directory")
    _add_judge_options(p)
    p.set_defaults(func=_cmd_agreement)

    p = sub.add_parser("rules", help="adversarial (red-team) rule annotation")
    rs = p.add_subparsers(dest="rules_command", required=True)
    q = rs.add_parser("init", help="start a workspace from a rules file")
    _workspace(q)
    q.add_argument("--rules", required=True, help="AUTO-EVAL-VIDEO.json or its folder")
    q = rs.add_parser("attack", help="record an attack answer and the verdict a human expects")
    _instance(q)
    source = q.add_mutually_exclusive_group(required=True)
    source.add_argument("--answer", help="the attack: an answer the rule may judge wrongly")
    source.add_argument("--answer-file", help="the attack's answer, from a file")
    q.add_argument(
        "--expect",
        type=int,
        choices=[0, 1],
        required=True,
        help="the verdict a human gives it (1 correct, 0 incorrect)",
    )
    q.add_argument("--note", default="", help="why this attack (kept in the history)")
    q = rs.add_parser("check", help="run the judge with the current rule on every attack")
    _instance(q)
    _add_judge_options(q, prompt=False)
    q = rs.add_parser("revise", help="a new rule version, its text from a file")
    _instance(q)
    q.add_argument("--rule-file", required=True, help="the new rule's text")
    q.add_argument("--note", default="", help="what the revision fixes (kept in the history)")
    q = rs.add_parser("show", help="an instance's history, or every instance's status")
    _workspace(q)
    q.add_argument("id", nargs="?", help="the instance ID (default: every instance's status)")
    q = rs.add_parser("export", help="write the rules file with the revised rules")
    _workspace(q)
    options.add_out(q, "the rules file to write (AUTO-EVAL-VIDEO.json)")
    q.add_argument("--initial", action="store_true", help="the rules before any revision")
    p.set_defaults(func=_cmd_rules)
