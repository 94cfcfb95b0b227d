"""`vidbench audit RUN... --out DIR` and `vidbench audit --plan N`.

A stored run's task comes from the registry (vidbench/registry.py): the audit knows no
benchmark."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from vidbench import cli_types as types
from vidbench.console import err, out
from vidbench.core.errors import ConfigError


def _cmd_audit(args: argparse.Namespace) -> int:
    if args.plan is not None:
        if args.runs or args.out:
            raise ConfigError("audit --plan N: give no runs and no --out (it sizes a plan)")
        return _plan(args.plan, 0.7 if args.accuracy is None else args.accuracy, args.discordance)
    if args.accuracy is not None or args.discordance is not None:  # not silently ignored
        raise ConfigError(
            "audit: --accuracy and --discordance size a plan: give them with --plan N"
        )
    if not args.runs or not args.out:
        raise ConfigError("audit: give two or more runs and --out DIR (or --plan N)")
    from vidbench.audit.audit import AuditOptions, audit
    from vidbench.audit.link import DOCUMENT, PAGE, record_audit
    from vidbench.audit.page import render
    from vidbench.audit.responses import read_responses
    from vidbench.core.files import make_folder, write_atomic, write_json
    from vidbench.report.results_dir import RUN_FILE, run_folders

    given = [Path(r) for r in args.runs]
    missing = [str(r) for r in given if not r.is_dir()]
    if missing:
        raise ConfigError(f"audit: no such results directory: {', '.join(missing)}")
    runs = run_folders(given, marks=(RUN_FILE,))[0]  # each a folder (above): none skipped
    target = Path(args.out)
    if (target.exists() or target.is_symlink()) and not target.is_dir():  # named before the work
        raise ConfigError(f"--out {target}: not a folder (a file or a broken link is in the way)")
    responses = read_responses(runs)
    options = AuditOptions(duplicates=not args.no_duplicates, sbert_model=args.sbert_model)
    document = audit(responses, options)
    make_folder(target)
    write_json(target / DOCUMENT, document)
    texts = {item.id: item.text for item in responses.items}
    write_atomic(target / PAGE, render(document, texts).encode())
    record_audit(runs, target)
    _print(document)
    err.print(f"wrote {target / DOCUMENT} and {target / PAGE}", highlight=False)
    return 0


def _print(document: dict) -> None:
    summary = document["summary"]
    table = Table(title=f"audit: {escape(summary['task'])}")
    for name in ("Model", "Items", "Accuracy %", "95% interval", "Letter bias p"):
        table.add_column(name, justify="left" if name == "Model" else "right")
    for m in document["models"]:
        ci = m["ci95"]
        bias = m["position_bias"]
        table.add_row(
            escape(m["model"] + (" (blind)" if m["blind"] else "")),
            str(m["n"]),
            f"{100 * m['accuracy']:.1f}" if m["accuracy"] is not None else "—",
            f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "—",
            f"{bias['p_value']:.2g}" if bias else "—",
        )
    out.print(table)
    flags = ", ".join(f"{kind} {n}" for kind, n in summary["flags"].items())
    out.print(f"{summary['flagged_items']} of {summary['items']} items flagged: {flags}")
    if summary["reviewed"]["items"]:
        out.print(
            f"{summary['reviewed']['items']} item(s) reviewed and kept: the flags they were "
            "kept with are shown as reviewed and not counted"
        )
    size = summary["sizing"]
    if size:
        out.print(
            f"sizing: at {size['n']} items a score's 95% interval is "
            f"[{100 * size['ci95'][0]:.1f}, {100 * size['ci95'][1]:.1f}] around "
            f"{100 * size['accuracy']:.1f}; McNemar (80% power) detects "
            + _points(size["detectable_observed"], size["discordance_observed"])
            + " between these models, "
            + _points(size["detectable"], size["discordance"])
            + " between models with independent errors",
            highlight=False,
        )
    for note in summary["notes"]:
        err.print(f"[yellow]note[/]: {escape(note)}", highlight=False)


def _points(share: float | None, discordance: float | None) -> str:
    if share is None and discordance is None:
        return "nothing (no two models graded on the same items)"
    if share is None and discordance == 0:  # identical answers, or 0% or 100% accuracy
        return "no difference (the models never disagree)"
    if share is None:
        return "no difference (too few items)"
    return f"{100 * share:.2g} points" if share < 0.001 else f"{100 * share:.1f} points"


def _plan(n: int, accuracy: float, discordance: float | None) -> int:
    from vidbench.audit.sizing import sizing

    most = 2 * min(accuracy, 1 - accuracy)  # one model right where the other is wrong, at most
    if discordance is not None and discordance > most + 1e-12:
        raise ConfigError(
            f"audit --plan: --discordance {discordance:g} cannot be: two models of "
            f"{100 * accuracy:g}% accuracy disagree on at most {most:.3g} of the items"
        )
    size = sizing(n, accuracy, discordance)
    low, high = size.ci95
    out.print(
        f"{n} items at {100 * accuracy:.1f}% accuracy: 95% interval [{100 * low:.1f}, "
        f"{100 * high:.1f}] (Wilson)\nsmallest difference McNemar's test detects with 80% "
        f"power at alpha 0.05, the models disagreeing on {100 * size.discordance:.1f}% of "
        f"items{' (independent errors)' if discordance is None else ''}: "
        + _points(size.detectable, size.discordance),
        highlight=False,
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "audit",
        help="flag wrong golds, blind-solvable and useless items from the runs of one benchmark",
    )
    p.add_argument("runs", nargs="*", help="results directories of runs on the same data")
    p.add_argument("--out", help="folder for audit.json and audit.html")
    p.add_argument(
        "--no-duplicates", action="store_true", help="skip the near-duplicate search (SBERT)"
    )
    p.add_argument("--sbert-model", help="sentence-transformers model folder (duplicates)")
    p.add_argument(
        "--plan",
        type=types.whole_number(1, 10**12),  # beyond, the interval's count overflows numpy
        metavar="N",
        help="size a benchmark of N items instead",
    )
    p.add_argument(
        "--accuracy",
        type=types.number(0.0, 1.0),
        help="--plan: the models' accuracy, a share (default 0.7)",
    )
    p.add_argument(
        "--discordance",
        type=types.number(0.0, 1.0),
        help="--plan: share of items two models disagree on (default: independent errors)",
    )
    p.set_defaults(func=_cmd_audit)
